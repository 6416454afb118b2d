/**
 * C2SP signed-note (Ed25519 signatures, verifier keys) and C2SP tlog-checkpoint: what a transparency log publishes as
 * its state and what a verifier checks offline against the log's key. Ed25519 through WebCrypto (Node 24, current
 * browsers); browser-safe.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { equalBytes, fromBase64, toArrayBuffer, toBase64, toHex } from './bytes.ts';
import { HASH_SIZE } from './tlog.ts';

/** Signature type byte of Ed25519 signed-note keys (C2SP signed-note, Signature types). */
export const ED25519_TYPE = 0x01;

/** A verifier key (C2SP signed-note, Verifier keys): `<name>+<hex key ID>+<base64(type || key)>`. */
export interface VerifierKey {
  name: string;
  /** The 4-byte key ID. */
  id: Uint8Array;
  /** Signature type byte (0x01: Ed25519; 0x04: Ed25519 cosignature/v1). */
  type: number;
  /** The public key material (Ed25519: 32 bytes, RFC 8032). */
  publicKey: Uint8Array;
}

/** One signature line of a note: key name, 4-byte key ID and the signature bytes. */
export interface NoteSignature {
  name: string;
  id: Uint8Array;
  signature: Uint8Array;
}

/** A signed note split into its text (with the final newline) and its signature lines. */
export interface SignedNote {
  text: string;
  signatures: NoteSignature[];
}

const encoder = new TextEncoder();

/**
 * Key ID of an Ed25519 key: SHA-256(name || 0x0A || type || public key)[:4] (C2SP signed-note); `type` 0x01 for
 * note signatures, 0x04 for cosignature/v1 (C2SP tlog-cosignature).
 */
export function ed25519KeyId(name: string, publicKey: Uint8Array, type: number = ED25519_TYPE): Uint8Array {
  const nameBytes = encoder.encode(name);
  const data = new Uint8Array(nameBytes.length + 2 + publicKey.length);
  data.set(nameBytes);
  data[nameBytes.length] = 0x0a;
  data[nameBytes.length + 1] = type;
  data.set(publicKey, nameBytes.length + 2);
  return sha256(data).subarray(0, 4);
}

/** Whether `text` holds an ASCII control character (below U+0020), a newline allowed when `newline`. */
function hasControl(text: string, newline: boolean): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 && !(newline && c === 0x0a)) return true;
  }
  return false;
}

function validKeyName(name: string): boolean {
  return name.length > 0 && !/[\s+]/.test(name) && !hasControl(name, false);
}

/**
 * The verifier key text of an Ed25519 public key (32 bytes) of signature `type` (0x01 note signatures, 0x04
 * cosignature/v1). @throws TypeError for a bad name or key.
 */
export function ed25519VerifierKey(name: string, publicKey: Uint8Array, type: number = ED25519_TYPE): string {
  if (!validKeyName(name)) throw new TypeError(`not a key name: "${name}"`);
  if (publicKey.length !== 32) throw new TypeError('an Ed25519 public key is 32 bytes');
  const material = new Uint8Array(33);
  material[0] = type;
  material.set(publicKey, 1);
  return `${name}+${toHex(ed25519KeyId(name, publicKey, type))}+${toBase64(material)}`;
}

/**
 * Parses a verifier key of an Ed25519 note signer (type 0x01).
 * @throws TypeError naming what is wrong.
 */
export function parseVerifierKey(vkey: string): VerifierKey {
  return parseEd25519VerifierKey(vkey, ED25519_TYPE);
}

/**
 * Parses a verifier key of signature `type` (0x01 Ed25519 note signatures, 0x04 cosignature/v1 witness keys).
 * Only Ed25519 keys are accepted, and their ID must be the one their name and key give.
 * @throws TypeError naming what is wrong.
 */
export function parseEd25519VerifierKey(vkey: string, type: number): VerifierKey {
  // The base64 key may itself hold `+`: the name ends at the first one, the ID is the 8 hex digits after it.
  const m = /^([^+]+)\+([^+]*)\+(.+)$/.exec(vkey.trim());
  if (!m) throw new TypeError('a verifier key is <name>+<hex key ID>+<base64 key>');
  const [, name = '', idHex = '', material = ''] = m;
  if (!validKeyName(name) || !/^[0-9a-f]{8}$/.test(idHex)) throw new TypeError('bad verifier key name or ID');
  const bytes = fromBase64(material);
  if (bytes[0] !== type || bytes.length !== 33) {
    throw new TypeError(
      type === ED25519_TYPE ? 'not an Ed25519 verifier key' : `not an Ed25519 key of type 0x0${type}`,
    );
  }
  const publicKey = bytes.subarray(1);
  const id = ed25519KeyId(name, publicKey, type);
  if (toHex(id) !== idHex) throw new TypeError('the verifier key ID does not match its name and key');
  return { name, id, type, publicKey };
}

/** The signature line of a note for `signature` made by key `name`/`id` (C2SP signed-note, Signatures). */
export function signatureLine(sig: NoteSignature): string {
  const body = new Uint8Array(4 + sig.signature.length);
  body.set(sig.id);
  body.set(sig.signature, 4);
  return `\u2014 ${sig.name} ${toBase64(body)}\n`;
}

/** A signed note of `text` (ending in a newline) and its signatures. @throws TypeError for a text without newline. */
export function formatSignedNote(note: SignedNote): string {
  if (!note.text.endsWith('\n')) throw new TypeError('a note text ends in a newline');
  return `${note.text}\n${note.signatures.map(signatureLine).join('')}`;
}

/**
 * Splits a signed note: the text up to the last blank line, then at least one signature line.
 * @throws TypeError for anything not a well-formed signed note (control characters, no signature, bad lines).
 */
export function parseSignedNote(note: string): SignedNote {
  if (hasControl(note, true)) throw new TypeError('a signed note has a control character');
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n'))
    throw new TypeError('a signed note has text, a blank line and signatures');
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  if (lines.length > 100) throw new TypeError('too many signatures');
  const signatures = lines.map((line) => {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
    if (!m) throw new TypeError('malformed signature line');
    const bytes = fromBase64(m[2] as string);
    if (bytes.length < 5) throw new TypeError('signature too short');
    return { name: m[1] as string, id: bytes.slice(0, 4), signature: bytes.slice(4) };
  });
  return { text, signatures };
}

/** Whether `signature` (64 bytes) is `publicKey`'s Ed25519 signature of `message` (RFC 8032), by WebCrypto. */
export async function ed25519Verify(
  publicKey: Uint8Array,
  signature: Uint8Array,
  message: Uint8Array,
): Promise<boolean> {
  const key = await globalThis.crypto.subtle.importKey(
    'raw',
    toArrayBuffer(publicKey),
    { name: 'Ed25519' },
    false,
    ['verify'],
  );
  return globalThis.crypto.subtle.verify('Ed25519', key, toArrayBuffer(signature), toArrayBuffer(message));
}

/**
 * Verifies a signed note against `keys`: signatures by unknown keys are ignored; every signature by a known key
 * (same name and ID) must verify; at least one must.
 * @returns the note's text and the names of the keys whose signatures verified.
 * @throws TypeError when the note is malformed, a known key's signature fails, or no known key signed it.
 */
export async function verifySignedNote(
  note: string,
  keys: readonly VerifierKey[],
): Promise<{ text: string; verifiedBy: string[] }> {
  const parsed = parseSignedNote(note);
  const message = encoder.encode(parsed.text);
  const verifiedBy: string[] = [];
  for (const sig of parsed.signatures) {
    const key = keys.find((k) => k.name === sig.name && equalBytes(k.id, sig.id));
    if (!key) continue;
    if (!(await ed25519Verify(key.publicKey, sig.signature, message))) {
      throw new TypeError(`the signature of ${sig.name} does not verify`);
    }
    verifiedBy.push(key.name);
  }
  if (verifiedBy.length === 0) throw new TypeError('no known key signed this note');
  return { text: parsed.text, verifiedBy };
}

/** A log checkpoint (C2SP tlog-checkpoint): origin, tree size, root hash, optional extension lines. */
export interface Checkpoint {
  origin: string;
  size: number;
  root: Uint8Array;
  extensions: string[];
}

/** The checkpoint's note text: `<origin>\n<size>\n<base64 root>\n[extension lines\n]`. */
export function formatCheckpoint(cp: Checkpoint): string {
  return `${cp.origin}\n${cp.size}\n${toBase64(cp.root)}\n${cp.extensions.map((e) => `${e}\n`).join('')}`;
}

/**
 * Parses a checkpoint's note text (the text of a signed note, without signatures).
 * @throws TypeError when it is not a checkpoint (size with leading zeroes, root not 32 bytes, empty lines).
 */
export function parseCheckpoint(text: string): Checkpoint {
  if (!text.endsWith('\n')) throw new TypeError('a checkpoint ends in a newline');
  const lines = text.slice(0, -1).split('\n');
  const [origin, sizeText, rootText, ...extensions] = lines;
  if (!origin || sizeText === undefined || rootText === undefined)
    throw new TypeError('a checkpoint has 3 lines');
  if (!/^(0|[1-9]\d*)$/.test(sizeText)) throw new TypeError('bad checkpoint size');
  const size = Number(sizeText);
  if (!Number.isSafeInteger(size)) throw new TypeError('checkpoint size too large');
  const root = fromBase64(rootText);
  if (root.length !== HASH_SIZE) throw new TypeError('a checkpoint root is 32 bytes');
  if (extensions.some((e) => e === '')) throw new TypeError('empty checkpoint extension line');
  return { origin, size, root, extensions };
}

/**
 * Verifies a signed checkpoint against the log's key (`verifySignedNote`) and that its origin is the key's name.
 * @throws TypeError as `verifySignedNote` and `parseCheckpoint`, or when the origin differs.
 */
export async function verifyCheckpoint(note: string, logKey: VerifierKey): Promise<Checkpoint> {
  const { text } = await verifySignedNote(note, [logKey]);
  const cp = parseCheckpoint(text);
  if (cp.origin !== logKey.name) throw new TypeError(`checkpoint of ${cp.origin}, not of ${logKey.name}`);
  return cp;
}
