/**
 * Byte helpers of the trust library, the verifier's checks and the signer: Web APIs only (WebCrypto, `atob`),
 * so that they run in browsers as in Node.
 */

/** Lower-case hex of `bytes`, no `0x`. */
export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}

/** Parses hex (an optional `0x`, any case, even length). @throws TypeError on anything else. */
export function fromHex(hex: string): Uint8Array {
  const clean = hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex;
  if (clean.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(clean)) throw new TypeError(`not hex: "${hex}"`);
  const out = new Uint8Array(clean.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(clean.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Decodes standard base64. @throws TypeError when it is not base64. */
export function fromBase64(text: string): Uint8Array {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    throw new TypeError('not base64');
  }
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/** Standard base64 of `bytes` (with padding). */
export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** Constant-length comparison of two byte strings. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/** Copies `bytes` into a fresh ArrayBuffer (WebCrypto and pkijs want one, not a view into a shared pool). */
export function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return copy.buffer;
}

/** The WebCrypto name of a digest (`SHA-256`...) for the OIDs of RFC 5754 (and SHA-1). */
export const DIGEST_BY_OID: Readonly<Record<string, string>> = {
  '1.3.14.3.2.26': 'SHA-1',
  '2.16.840.1.101.3.4.2.1': 'SHA-256',
  '2.16.840.1.101.3.4.2.2': 'SHA-384',
  '2.16.840.1.101.3.4.2.3': 'SHA-512',
};

/** WebCrypto digest of `data` (`SHA-256` by default). */
export async function digest(data: Uint8Array, algorithm = 'SHA-256'): Promise<Uint8Array> {
  return new Uint8Array(await globalThis.crypto.subtle.digest(algorithm, toArrayBuffer(data)));
}

/** SHA-256 of `data`, lower-case hex. */
export async function sha256Hex(data: Uint8Array): Promise<string> {
  return toHex(await digest(data));
}

/**
 * The DER certificates of a PEM text (every `-----BEGIN CERTIFICATE-----` block, in order).
 * @throws TypeError when there is none.
 */
export function pemCertificates(pem: string): Uint8Array[] {
  const blocks = [...pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)];
  if (blocks.length === 0) throw new TypeError('no PEM certificate found');
  return blocks.map((m) => fromBase64((m[1] ?? '').replace(/\s+/g, '')));
}
