import { createHash } from 'node:crypto';

/**
 * Lower-case hex SHA-256 (FIPS 180-4) of `data`, bytes or a string read as UTF-8, computed at once with Node's
 * `crypto`: 64 characters. For token hashes, certificate and file digests in Node code; browser code (and the
 * verifier, which runs in both) uses the asynchronous WebCrypto `sha256Hex` of `@notary/trust/bytes`.
 */
export function sha256HexSync(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}
