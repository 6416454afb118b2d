/**
 * ECDSA signature values as CMS wants them. Tokens (PKCS#11 CKM_ECDSA) and WebCrypto answer the raw r‖s of
 * equal halves; a CMS SignerInfo carries the DER `Ecdsa-Sig-Value` (RFC 3279 2.2.3, RFC 5753 7.2).
 * Platform-neutral: runs in Electron's main and in the browser.
 */

/** A DER length (short form below 128, long form above). */
function derLength(n: number): number[] {
  if (n < 0x80) return [n];
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return [0x80 | bytes.length, ...bytes];
}

/** An unsigned big-endian integer as a DER INTEGER: leading zeros dropped, one 0x00 kept before a high bit. */
function derInteger(bytes: Uint8Array): number[] {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i += 1;
  const trimmed = Array.from(bytes.subarray(i));
  const body = (trimmed[0] ?? 0) & 0x80 ? [0, ...trimmed] : trimmed;
  return [0x02, ...derLength(body.length), ...body];
}

/**
 * The raw ECDSA value r‖s (two equal halves: 64 bytes for P-256, 96 for P-384, 132 for P-521) as DER
 * `SEQUENCE { INTEGER r, INTEGER s }` (RFC 3279 2.2.3).
 * @throws Error for an empty or odd-length value.
 */
export function ecdsaRawToDer(raw: Uint8Array): Uint8Array {
  if (raw.length === 0 || raw.length % 2 !== 0) {
    throw new Error(`an ECDSA value r‖s has two equal halves, got ${raw.length} bytes`);
  }
  const half = raw.length / 2;
  const body = [...derInteger(raw.subarray(0, half)), ...derInteger(raw.subarray(half))];
  return new Uint8Array([0x30, ...derLength(body.length), ...body]);
}
