/**
 * The local shape check of an IPFS CID before `documents.importIpfs` is called (spec, Endpoints:
 * `POST /api/documents/import/ipfs`, "bare CID v0 or v1 base32"). The server is the authority (it also
 * refuses a directory's CID, which no shape can tell); this only turns the common mistakes into a sentence
 * before any request: a path or URL instead of a bare CID, another multibase, upper case, a truncated paste.
 *
 * - CIDv0: `Qm` + 44 base58btc characters (a base58btc sha2-256 multihash, 34 bytes).
 * - CIDv1: multibase prefix `b` + RFC 4648 base32, lower case, no padding; decoded it must be
 *   `<varint version=1><varint codec><varint hash code><varint digest length><digest>` with the digest's
 *   length as declared (CID spec, github.com/multiformats/cid), the codec one a UnixFS file can have
 *   (`raw` 0x55 or `dag-pb` 0x70) and the hash sha2-256 (0x12, 32 bytes), the one the server verifies.
 *
 * Platform-neutral: used by the renderer (the sentence), the web bridge and Electron main (IPC validation).
 */

/** Why a string is not a bare CID the service accepts; the renderer has one sentence per reason. */
export type CidProblem =
  | 'empty'
  | 'path' // `ipfs://…`, `/ipfs/…`, a gateway URL: the server wants the bare CID
  | 'uppercase' // base32 written in upper case (`B…`/`bAFY…`): the accepted form is lower case
  | 'other-base' // a CIDv1 in base36 (`k…`), base58btc (`z…`), base16 (`f…`)…: convert to base32
  | 'v0' // starts like a CIDv0 but is not `Qm` + 44 base58btc characters
  | 'v1' // starts like a base32 CIDv1 but does not decode to one (truncated, altered)
  | 'codec' // a well-formed CID of IPLD data (dag-cbor, dag-json…), not of a file
  | 'hash' // a well-formed CID whose multihash is not sha2-256 (the only one the service verifies)
  | 'unknown';

export type CidCheck =
  | { ok: true; cid: string; version: 0 | 1 }
  | {
      ok: false;
      problem: CidProblem;
      /** The bare CID inside a path or URL the user pasted, when it is itself valid (to suggest it). */
      suggestion?: string;
    };

/** Longest input examined: a CIDv1 with a 64-byte digest is about 110 base32 characters. */
export const MAX_CID_LENGTH = 200;

const CID_V0 = /^Qm[1-9A-HJ-NP-Za-km-z]{44}$/;
const BASE32_LOWER = 'abcdefghijklmnopqrstuvwxyz234567';
/** Multicodec codes of the two IPLD codecs a UnixFS file's root can have. */
const FILE_CODECS = new Set([0x55 /* raw */, 0x70 /* dag-pb */]);
/** Multihash code of sha2-256 (multicodec table). */
const SHA2_256 = 0x12;
/** Multibase prefixes of the other bases a CIDv1 is commonly written in (multibase table). */
const OTHER_MULTIBASE = /^[kKzfFmMuUvVtTcChH][A-Za-z0-9+/=_-]{20,}$/;

/** RFC 4648 base32 (lower case, unpadded) to bytes; null when a character or the trailing bits are wrong. */
function base32Decode(text: string): Uint8Array | null {
  const out: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const char of text) {
    const value = BASE32_LOWER.indexOf(char);
    if (value < 0) return null;
    buffer = (buffer << 5) | value;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      out.push((buffer >> bits) & 0xff);
      buffer &= (1 << bits) - 1;
    }
  }
  // Canonical unpadded base32 leaves fewer than 5 bits over, all zero (RFC 4648 section 6).
  if (bits >= 5 || buffer !== 0) return null;
  return Uint8Array.from(out);
}

/** An unsigned LEB128 varint of at most 4 bytes (multiformats unsigned-varint) at `offset`. */
function readVarint(bytes: Uint8Array, offset: number): { value: number; next: number } | null {
  let value = 0;
  for (let i = 0; i < 4; i += 1) {
    const byte = bytes[offset + i];
    if (byte === undefined) return null;
    value += (byte & 0x7f) * 2 ** (7 * i);
    if ((byte & 0x80) === 0) {
      // Minimal encoding only: a trailing zero byte would give one CID two spellings.
      if (i > 0 && byte === 0) return null;
      return { value, next: offset + i + 1 };
    }
  }
  return null;
}

/** A base32 CIDv1: `ok`, `v1` (does not decode to a CID), `codec` (not a file's) or `hash` (not sha2-256). */
function checkV1(text: string): 'ok' | 'v1' | 'codec' | 'hash' {
  const bytes = base32Decode(text.slice(1));
  if (!bytes) return 'v1';
  const version = readVarint(bytes, 0);
  if (version?.value !== 1) return 'v1';
  const codec = readVarint(bytes, version.next);
  if (!codec) return 'v1';
  const hash = readVarint(bytes, codec.next);
  if (!hash) return 'v1';
  const length = readVarint(bytes, hash.next);
  if (!length || length.value === 0 || bytes.length - length.next !== length.value) return 'v1';
  if (!FILE_CODECS.has(codec.value)) return 'codec';
  return hash.value === SHA2_256 && length.value === 32 ? 'ok' : 'hash';
}

/** The last path segment after `/ipfs/` (or the host of `ipfs://<cid>`), without query or fragment. */
function cidInsidePath(text: string): string | null {
  const match = /^(?:ipfs:\/\/|.*?\/ipfs\/)([^/?#]+)/i.exec(text);
  return match?.[1] ?? null;
}

/**
 * Checks a CID typed or pasted by the user (surrounding white space ignored).
 * @returns `{ok: true, cid, version}` with the trimmed CID, or `{ok: false, problem}` naming the mistake
 *   (and, for a path or URL holding a valid CID, that CID as `suggestion`).
 */
export function checkCid(input: string): CidCheck {
  const text = input.trim();
  if (!text) return { ok: false, problem: 'empty' };
  if (text.length > MAX_CID_LENGTH) return { ok: false, problem: 'unknown' };
  if (text.includes('/') || /^ip[fn]s:/i.test(text)) {
    const inner = cidInsidePath(text);
    const innerCheck = inner && inner !== text ? checkCid(inner) : null;
    return innerCheck?.ok
      ? { ok: false, problem: 'path', suggestion: innerCheck.cid }
      : { ok: false, problem: 'path' };
  }
  if (text.startsWith('Qm')) return CID_V0.test(text) ? { ok: true, cid: text, version: 0 } : bad('v0');
  if (/^b[a-z2-7]+$/.test(text)) {
    const result = checkV1(text);
    return result === 'ok' ? { ok: true, cid: text, version: 1 } : bad(result);
  }
  if (/^[bB][A-Za-z2-7]+$/.test(text)) {
    // Upper-case base32 (multibase `B`), or a lower-case prefix with upper-case letters.
    return checkV1(`b${text.slice(1).toLowerCase()}`) === 'ok' ? bad('uppercase') : bad('v1');
  }
  // A hex digest (a SHA-256 pasted by mistake) may start with `b` or `f`: it is no CID in any base.
  if (/^[0-9a-f]{64}$/i.test(text)) return bad('unknown');
  // `b` and letters or digits: a base32 CIDv1 with a character that base32 has not (0, 1, 8, 9).
  if (/^b[a-z0-9]{20,}$/.test(text)) return bad('v1');
  if (OTHER_MULTIBASE.test(text)) return bad('other-base');
  return bad('unknown');
}

function bad(problem: CidProblem): CidCheck {
  return { ok: false, problem };
}

/** True for a bare CID the service accepts (`checkCid(s).ok` on an already trimmed string). */
export function isBareCid(s: string): boolean {
  const check = checkCid(s);
  return check.ok && check.cid === s;
}

/**
 * The CID of a document imported from IPFS, read from its `sourceUri` (`ipfs://<cid>`, spec: Documents);
 * null for any other source or a URI that does not hold a bare CID.
 */
export function cidOfSource(doc: { sourceType: string; sourceUri: string | null }): string | null {
  if (doc.sourceType !== 'ipfs' || !doc.sourceUri?.startsWith('ipfs://')) return null;
  const cid = doc.sourceUri.slice('ipfs://'.length).replace(/\/+$/, '');
  return isBareCid(cid) ? cid : null;
}
