/**
 * Witness cosignatures of a log's checkpoints (C2SP tlog-cosignature, the Ed25519 `cosignature/v1` type) and the
 * request body of the C2SP tlog-witness `add-checkpoint` call. A cosignature is a signed-note signature line whose
 * signature is a timestamped signature: an 8-byte big-endian POSIX time, then the Ed25519 signature of
 * `cosignature/v1\ntime <t>\n` followed by the checkpoint's note text. Browser-safe.
 */
import { equalBytes, fromBase64, toBase64 } from './bytes.ts';
import { ed25519Verify, parseEd25519VerifierKey, parseSignedNote, type VerifierKey } from './signed-note.ts';
import { HASH_SIZE } from './tlog.ts';

/** Signature type byte of Ed25519 cosignature/v1 keys (C2SP tlog-cosignature). */
export const COSIGNATURE_V1_TYPE = 0x04;
/** Consistency proof lines a witness accepts at most (C2SP tlog-witness, add-checkpoint). */
export const MAX_PROOF_LINES = 63;

const encoder = new TextEncoder();

/** Parses a witness's verifier key (type 0x04). @throws TypeError as `parseVerifierKey`. */
export function parseCosignerKey(vkey: string): VerifierKey {
  return parseEd25519VerifierKey(vkey, COSIGNATURE_V1_TYPE);
}

/** The message a cosignature/v1 signs: `cosignature/v1\ntime <seconds>\n<checkpoint note text>` (UTF-8). */
export function cosignatureMessage(text: string, timestamp: number): Uint8Array {
  return encoder.encode(`cosignature/v1\ntime ${timestamp}\n${text}`);
}

/** The signature bytes of a cosignature line: the 8-byte big-endian `timestamp` (seconds), then `signature`. */
export function timestampedSignature(timestamp: number, signature: Uint8Array): Uint8Array {
  const out = new Uint8Array(8 + signature.length);
  new DataView(out.buffer).setBigUint64(0, BigInt(timestamp));
  out.set(signature, 8);
  return out;
}

/** A cosignature that verified: the witness key's name, the time it gives (POSIX seconds) and its note line. */
export interface VerifiedCosignature {
  name: string;
  timestamp: number;
  /** The signature line as it stands in the note (`— <name> <base64>\n`). */
  line: string;
}

/**
 * Verifies the cosignatures of a signed checkpoint against the witness keys `keys` (type 0x04): lines of other
 * keys (the log's own, unknown witnesses) are ignored; a line whose name and key ID match a key must verify.
 * @returns the cosignatures that verified, one per key at most, in the note's order (none: empty).
 * @throws TypeError when the note is malformed or a known key's cosignature fails (C2SP signed-note: the note is
 *   then malformed), or a timestamp is zero or past 2^63 - 1.
 */
export async function verifyCosignatures(
  note: string,
  keys: readonly VerifierKey[],
): Promise<VerifiedCosignature[]> {
  const parsed = parseSignedNote(note);
  const lines = note.slice(parsed.text.length + 1, -1).split('\n');
  const verified: VerifiedCosignature[] = [];
  for (const [i, sig] of parsed.signatures.entries()) {
    const key = keys.find(
      (k) => k.type === COSIGNATURE_V1_TYPE && k.name === sig.name && equalBytes(k.id, sig.id),
    );
    if (!key || verified.some((v) => v.name === key.name)) continue;
    if (sig.signature.length !== 8 + 64)
      throw new TypeError(`the cosignature of ${sig.name} is not 72 bytes`);
    const time = new DataView(sig.signature.buffer, sig.signature.byteOffset).getBigUint64(0);
    if (time === 0n || time > 2n ** 63n - 1n)
      throw new TypeError(`the cosignature of ${sig.name} has no time`);
    const timestamp = Number(time);
    const ok = await ed25519Verify(
      key.publicKey,
      sig.signature.subarray(8),
      cosignatureMessage(parsed.text, timestamp),
    );
    if (!ok) throw new TypeError(`the cosignature of ${sig.name} does not verify`);
    verified.push({ name: key.name, timestamp, line: `${lines[i]}\n` });
  }
  return verified;
}

/** An `add-checkpoint` request (C2SP tlog-witness): the size the client believes the witness holds, the proof. */
export interface AddCheckpointRequest {
  oldSize: number;
  /** The consistency proof from `oldSize` to the checkpoint's size (RFC 9162, 2.1.4), empty from 0. */
  proof: Uint8Array[];
  /** The signed checkpoint (C2SP tlog-checkpoint in a signed-note). */
  note: string;
}

/** The body of an `add-checkpoint` request: `old <size>`, one base64 hash a line, a blank line, the note. */
export function formatAddCheckpoint(req: AddCheckpointRequest): string {
  return `old ${req.oldSize}\n${req.proof.map((h) => `${toBase64(h)}\n`).join('')}\n${req.note}`;
}

/**
 * Parses an `add-checkpoint` request body (C2SP tlog-witness).
 * @throws TypeError for a body that is not one (no old size line, a size with leading zeroes, a proof line not a
 *   32-byte hash, more than 63 proof lines, no blank line).
 */
export function parseAddCheckpoint(body: string): AddCheckpointRequest {
  const blank = body.indexOf('\n\n');
  if (blank < 0) throw new TypeError('an add-checkpoint body has a blank line before the checkpoint');
  const [oldLine = '', ...proofLines] = body.slice(0, blank).split('\n');
  const m = /^old (0|[1-9]\d*)$/.exec(oldLine);
  if (!m) throw new TypeError('an add-checkpoint body starts with "old <size>"');
  const oldSize = Number(m[1]);
  if (!Number.isSafeInteger(oldSize)) throw new TypeError('old size too large');
  if (proofLines.length > MAX_PROOF_LINES) throw new TypeError('more than 63 consistency proof lines');
  const proof = proofLines.map((line) => {
    const hash = /^[A-Za-z0-9+/]+=*$/.test(line) ? fromBase64(line) : new Uint8Array(0);
    if (hash.length !== HASH_SIZE) throw new TypeError('a consistency proof line is a base64 SHA-256 hash');
    return hash;
  });
  return { oldSize, proof, note: body.slice(blank + 2) };
}
