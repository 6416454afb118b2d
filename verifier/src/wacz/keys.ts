/**
 * The signature value of `signedData` (WACZ Signing and Verification 0.1.0, section 6, step 4): a signature
 * over the ASCII of `hash` with a public key, ECDSA (DER `Ecdsa-Sig-Value` as authsign writes it, or raw
 * `r || s` as WebCrypto does) or RSA PKCS#1 v1.5, with SHA-256.
 */
import { asn1js, pkijs } from '@notary/trust/asn1';
import { fromBase64, toArrayBuffer } from '@notary/trust/bytes';

/** The SubjectPublicKeyInfo DER of a certificate. */
export function spkiOf(cert: pkijs.Certificate): Uint8Array {
  return new Uint8Array(cert.subjectPublicKeyInfo.toSchema().toBER(false));
}

const CURVES: Readonly<Record<string, { name: string; size: number }>> = {
  '1.2.840.10045.3.1.7': { name: 'P-256', size: 32 },
  '1.3.132.0.34': { name: 'P-384', size: 48 },
  '1.3.132.0.35': { name: 'P-521', size: 66 },
};

/**
 * Whether `signatureB64` verifies over the ASCII of `text` with the key `spki` (DER SubjectPublicKeyInfo):
 * ECDSA (P-256, P-384, P-521; DER or raw `r || s`) or RSA PKCS#1 v1.5, with SHA-256.
 * @throws Error when the key is of another kind or does not parse.
 */
export async function verifyOver(text: string, signatureB64: string, spki: Uint8Array): Promise<boolean> {
  const info = pkijs.PublicKeyInfo.fromBER(toArrayBuffer(spki));
  const algorithm = info.algorithm.algorithmId;
  const data = new TextEncoder().encode(text);
  const signature = fromBase64(signatureB64);
  const subtle = globalThis.crypto.subtle;
  if (algorithm === '1.2.840.10045.2.1') {
    const params = info.algorithm.algorithmParams;
    const curve =
      params instanceof asn1js.ObjectIdentifier ? CURVES[params.valueBlock.toString()] : undefined;
    if (!curve) throw new Error('an EC key of a curve not read here (P-256, P-384, P-521 are)');
    const key = await subtle.importKey(
      'spki',
      toArrayBuffer(spki),
      { name: 'ECDSA', namedCurve: curve.name },
      false,
      ['verify'],
    );
    const raw = signature.length === 2 * curve.size ? signature : derToRaw(signature, curve.size);
    if (!raw) return false;
    return subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, toArrayBuffer(raw), toArrayBuffer(data));
  }
  if (algorithm === '1.2.840.113549.1.1.1') {
    const key = await subtle.importKey(
      'spki',
      toArrayBuffer(spki),
      { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
      false,
      ['verify'],
    );
    return subtle.verify('RSASSA-PKCS1-v1_5', key, toArrayBuffer(signature), toArrayBuffer(data));
  }
  throw new Error(`a key of algorithm ${algorithm}: only ECDSA and RSA are read`);
}

/** A DER `Ecdsa-Sig-Value` (RFC 3279) as the raw `r || s` WebCrypto checks; null when it is not one. */
function derToRaw(der: Uint8Array, size: number): Uint8Array | null {
  const asn = asn1js.fromBER(toArrayBuffer(der));
  if (asn.offset !== der.length || !(asn.result instanceof asn1js.Sequence)) return null;
  const [r, s] = asn.result.valueBlock.value;
  if (!(r instanceof asn1js.Integer) || !(s instanceof asn1js.Integer)) return null;
  const out = new Uint8Array(2 * size);
  for (const [i, n] of [r, s].entries()) {
    let bytes = new Uint8Array(n.valueBlock.valueHexView);
    while (bytes.length > size && bytes[0] === 0) bytes = bytes.subarray(1);
    if (bytes.length > size) return null;
    out.set(bytes, i * size + size - bytes.length);
  }
  return out;
}
