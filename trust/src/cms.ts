import { errorMessage } from '@notary/shared/error-message';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { DIGEST_BY_OID, digest, equalBytes, toArrayBuffer, toHex } from './bytes.ts';

/**
 * CMS (RFC 5652) signature checks shared by the RFC 3161 token (check 5) and the PAdES signature (check 6),
 * on pkijs and WebCrypto only. Each function returns what it found; the caller turns it into evidence.
 */

export const OID = {
  signedData: '1.2.840.113549.1.7.2',
  data: '1.2.840.113549.1.7.1',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingCertificate: '1.2.840.113549.1.9.16.2.12',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14',
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  extKeyUsage: '2.5.29.37',
  subjectKeyIdentifier: '2.5.29.14',
  timeStamping: '1.3.6.1.5.5.7.3.8',
} as const;

/** A parsed CMS ContentInfo(SignedData) and its single SignerInfo. */
export interface ParsedSignedData {
  signedData: pkijs.SignedData;
  signerInfo: pkijs.SignerInfo;
  /** Certificates carried in the SignedData. */
  certificates: pkijs.Certificate[];
}

/**
 * The SignedData of a DER CMS `ContentInfo` (RFC 5652 3, 5.1), any number of SignerInfos.
 * @throws Error naming `what` when it is not DER, not a ContentInfo or not a SignedData.
 */
export function signedDataOf(der: Uint8Array, what: string): pkijs.SignedData {
  const asn = asn1js.fromBER(toArrayBuffer(der));
  if (asn.offset === -1) throw new Error(`${what}: not DER (${asn.result.error})`);
  const contentInfo = new pkijs.ContentInfo({ schema: asn.result });
  if (contentInfo.contentType !== OID.signedData) throw new Error(`${what}: not a SignedData`);
  const carried = takeCertificates(contentInfo.content);
  const signedData = new pkijs.SignedData({ schema: contentInfo.content });
  if (carried) {
    signedData.certificates = carried.map((block) =>
      cachedCertificate(block.valueBeforeDecodeView.slice(), () => new pkijs.Certificate({ schema: block })),
    );
  }
  return signedData;
}

/**
 * The `certificates [0]` set of a parsed SignedData `content` (RFC 5652 5.1), taken out of it when it holds
 * X.509 certificates only (each a SEQUENCE), for `cachedCertificate`; undefined (and `content` untouched)
 * otherwise: pkijs then reads the set as it is.
 */
function takeCertificates(content: unknown): asn1js.AsnType[] | undefined {
  if (!(content instanceof asn1js.Constructed)) return undefined;
  const values = content.valueBlock.value;
  const at = values.findIndex((b) => b.idBlock.tagClass === 3 && b.idBlock.tagNumber === 0);
  const set = values[at];
  if (!(set instanceof asn1js.Constructed)) return undefined;
  const blocks = set.valueBlock.value;
  if (!blocks.every((b) => b instanceof asn1js.Sequence && b.valueBeforeDecodeView.byteLength > 0)) {
    return undefined;
  }
  values.splice(at, 1);
  return blocks;
}

/** Certificates by their DER (hex), the most recently used first out of `CERTIFICATE_CACHE_SIZE`. */
const byDer = new Map<string, pkijs.Certificate>();

/**
 * Certificates kept by their encoding: a service meets the same TSA and CA certificates in every token and
 * chain, and reading one (pkijs checks it against its whole schema) costs milliseconds.
 */
const CERTIFICATE_CACHE_SIZE = 128;

/** The certificate whose DER is `der`: the one read before, or `read()`'s, kept (`der` as its encoding). */
function cachedCertificate(der: Uint8Array, read: () => pkijs.Certificate): pkijs.Certificate {
  const key = toHex(der);
  const known = byDer.get(key);
  if (known) {
    byDer.delete(key);
    byDer.set(key, known);
    return known;
  }
  const cert = read();
  rememberEncoding(cert, der);
  byDer.set(key, cert);
  const oldest = byDer.keys().next().value;
  if (byDer.size > CERTIFICATE_CACHE_SIZE && oldest !== undefined) byDer.delete(oldest);
  return cert;
}

/** Parses DER `ContentInfo(SignedData)` with exactly one SignerInfo. @throws Error naming what is wrong. */
export function parseSignedData(der: Uint8Array, what: string): ParsedSignedData {
  const signedData = signedDataOf(der, what);
  const signerInfo = signedData.signerInfos[0];
  if (!signerInfo || signedData.signerInfos.length !== 1)
    throw new Error(`${what}: not exactly one SignerInfo`);
  const certificates = (signedData.certificates ?? []).filter(
    (c): c is pkijs.Certificate => c instanceof pkijs.Certificate,
  );
  return { signedData, signerInfo, certificates };
}

/** The certificate the SignerInfo's `sid` names (issuer and serial, or subject key identifier), if carried. */
export function signerCertificate(p: ParsedSignedData): pkijs.Certificate | null {
  const sid: unknown = p.signerInfo.sid;
  if (sid instanceof pkijs.IssuerAndSerialNumber) {
    return (
      p.certificates.find((c) => c.issuer.isEqual(sid.issuer) && c.serialNumber.isEqual(sid.serialNumber)) ??
      null
    );
  }
  if (sid instanceof asn1js.Constructed || sid instanceof asn1js.Primitive) {
    const keyId =
      sid instanceof asn1js.Constructed
        ? (sid.valueBlock.value[0] as asn1js.OctetString | undefined)?.valueBlock.valueHexView
        : sid.valueBlock.valueHexView;
    if (!keyId) return null;
    return (
      p.certificates.find((c) => {
        const ski = c.extensions?.find((x) => x.extnID === OID.subjectKeyIdentifier)?.parsedValue;
        return (
          ski instanceof asn1js.OctetString && equalBytes(new Uint8Array(ski.valueBlock.valueHexView), keyId)
        );
      }) ?? null
    );
  }
  return null;
}

/** The encoding of each certificate read or encoded once (a certificate object is never changed afterwards). */
const encodings = new WeakMap<pkijs.Certificate, Uint8Array>();

/** Records `der` as the encoding `cert` was parsed from, for `certificateDer`. */
function rememberEncoding(cert: pkijs.Certificate, der: Uint8Array): void {
  encodings.set(cert, der);
}

/**
 * The certificate (RFC 5280 4.1) DER `der` holds, read once for the same bytes (`cachedCertificate`) when
 * they are exactly that one element, nothing after it (they are then its encoding for `certificateDer`).
 * @throws pkijs' error when `der` is not a certificate.
 */
export function certificateFromDer(der: Uint8Array): pkijs.Certificate {
  const read = () => pkijs.Certificate.fromBER(toArrayBuffer(der));
  return derElementLength(der) === der.byteLength ? cachedCertificate(der.slice(), read) : read();
}

/** Bytes of the SEQUENCE `bytes` starts with (X.690 8.1: tag 0x30, definite length up to 4 bytes), or -1. */
function derElementLength(bytes: Uint8Array): number {
  const first = bytes[1];
  if (bytes[0] !== 0x30 || first === undefined) return -1;
  if (!(first & 0x80)) return 2 + first;
  const count = first & 0x7f;
  if (count === 0 || count > 4 || bytes.length < 2 + count) return -1;
  let length = 0;
  for (let i = 0; i < count; i += 1) length = length * 256 + (bytes[2 + i] ?? 0);
  return 2 + count + length;
}

/**
 * DER of a certificate: the bytes it was parsed from (`rememberEncoding`: by `parseCertificate`, or as a
 * SignedData carried it), else its encoding by pkijs, kept for the next call. The same array every time:
 * not to be modified. Re-encoding a certificate (parsing its TBS again) costs a few ms, and a B-LTA signature
 * asks for the DER of the same certificates tens of times.
 */
export function certificateDer(cert: pkijs.Certificate): Uint8Array {
  let der = encodings.get(cert);
  if (!der) {
    der = new Uint8Array(cert.toSchema().toBER(false));
    encodings.set(cert, der);
  }
  return der;
}

/** The certificate's subject common name (or the whole subject), for evidence. */
export function subjectName(cert: pkijs.Certificate): string {
  const parts = cert.subject.typesAndValues.map((tv) => {
    const short = ({ '2.5.4.3': 'CN', '2.5.4.10': 'O', '2.5.4.6': 'C' } as Record<string, string>)[tv.type];
    return `${short ?? tv.type}=${String(tv.value.valueBlock.value)}`;
  });
  return parts.join(', ');
}

/** The certificate's subject common name, else the value of its subject's first attribute, for messages. */
export function commonName(cert: pkijs.Certificate): string {
  const dn = cert.subject.typesAndValues;
  const pick = dn.find((t) => t.type === '2.5.4.3') ?? dn[0];
  const value: unknown = pick?.value.valueBlock.value;
  return typeof value === 'string' ? value : '(unnamed)';
}

/**
 * RFC 5652 5.4 and 5.6: the signed attributes carry `contentType` = `contentTypeOid` and `messageDigest` =
 * digest of `content` (with the SignerInfo's digest algorithm), and the signature over the DER of the signed
 * attributes verifies with `cert`'s public key.
 */
export async function verifySignerInfo(
  p: ParsedSignedData,
  cert: pkijs.Certificate,
  content: Uint8Array,
  contentTypeOid: string,
): Promise<{ contentType: boolean; messageDigest: boolean; signature: boolean; digestAlgorithm: string }> {
  const si = p.signerInfo;
  const algorithm = DIGEST_BY_OID[si.digestAlgorithm.algorithmId];
  if (!algorithm) throw new Error(`unsupported digest algorithm ${si.digestAlgorithm.algorithmId}`);
  const attrs = si.signedAttrs?.attributes ?? [];
  const ct = attrs.find((a) => a.type === OID.contentType)?.values[0];
  const md = attrs.find((a) => a.type === OID.messageDigest)?.values[0];
  const contentType = ct instanceof asn1js.ObjectIdentifier && ct.valueBlock.toString() === contentTypeOid;
  const actual = await digest(content, algorithm);
  const messageDigest =
    md instanceof asn1js.OctetString && equalBytes(new Uint8Array(md.valueBlock.valueHexView), actual);
  let signature = false;
  try {
    signature = await pkijs
      .getCrypto(true)
      .verifyWithPublicKey(
        si.signedAttrs?.encodedValue ?? new ArrayBuffer(0),
        si.signature,
        cert.subjectPublicKeyInfo,
        si.signatureAlgorithm,
        algorithm,
      );
  } catch {
    signature = false;
  }
  return { contentType, messageDigest, signature, digestAlgorithm: algorithm };
}

/** One ESSCertID (RFC 2634) or ESSCertIDv2 (RFC 5035) of a signing certificate attribute. */
export interface EssCertId {
  /** Digest OID: SHA-1 for SigningCertificate (v1); for V2 the one given, SHA-256 when omitted. */
  hashAlgorithm: string;
  certHash: Uint8Array;
  issuerSerial: pkijs.IssuerSerial | null;
}

/**
 * The ESSCertIDs of a signingCertificate (v1, RFC 2634 5.4) or signingCertificateV2 (RFC 5035 3) attribute,
 * in order: the first identifies the signer (RFC 5035 5.4).
 * @throws Error when the attribute is of another type or malformed.
 */
export function readEssCertIds(attribute: pkijs.Attribute): EssCertId[] {
  const v2 = attribute.type === OID.signingCertificateV2;
  if (!v2 && attribute.type !== OID.signingCertificate) {
    throw new Error(`ESS: ${attribute.type} is not a signing certificate attribute`);
  }
  const value: unknown = attribute.values[0];
  const certs = value instanceof asn1js.Sequence ? value.valueBlock.value[0] : undefined;
  if (!(certs instanceof asn1js.Sequence))
    throw new Error('ESS: SigningCertificate is not a SEQUENCE of certs');
  return certs.valueBlock.value.map((item) => {
    if (!(item instanceof asn1js.Sequence)) throw new Error('ESS: ESSCertID is not a SEQUENCE');
    const fields = [...item.valueBlock.value];
    let hashAlgorithm: string = v2 ? OID.sha256 : OID.sha1;
    if (v2 && fields[0] instanceof asn1js.Sequence) {
      hashAlgorithm = new pkijs.AlgorithmIdentifier({ schema: fields.shift() }).algorithmId;
    }
    const certHash = fields.shift();
    if (!(certHash instanceof asn1js.OctetString))
      throw new Error('ESS: ESSCertID certHash is not an OCTET STRING');
    const issuerSerial = fields[0] ? new pkijs.IssuerSerial({ schema: fields[0] }) : null;
    return { hashAlgorithm, certHash: new Uint8Array(certHash.valueBlock.valueHexView), issuerSerial };
  });
}

/**
 * Whether an ESSCertID names `cert`: its hash (with the ESSCertID's algorithm) is the certificate's, and its
 * issuerSerial, when present, names the certificate's issuer and serial number (`null` when absent).
 * @throws Error when the hash algorithm is not SHA-1/256/384/512.
 */
export async function essCertIdMatches(
  id: EssCertId,
  cert: pkijs.Certificate,
): Promise<{ hash: boolean; issuerSerial: boolean | null }> {
  const algorithm = DIGEST_BY_OID[id.hashAlgorithm];
  if (!algorithm) throw new Error(`ESS: unsupported certHash algorithm ${id.hashAlgorithm}`);
  const hash = equalBytes(await digest(certificateDer(cert), algorithm), id.certHash);
  if (!id.issuerSerial) return { hash, issuerSerial: null };
  const names = id.issuerSerial.issuer.names;
  const directoryName = names.length === 1 && names[0]?.type === 4 ? names[0].value : undefined;
  const issuerSerial =
    directoryName instanceof pkijs.RelativeDistinguishedNames &&
    directoryName.isEqual(cert.issuer) &&
    id.issuerSerial.serialNumber.isEqual(cert.serialNumber);
  return { hash, issuerSerial };
}

/** What the signing certificate attribute of a SignerInfo says of a certificate (RFC 5035, RFC 2634). */
export type EssFinding =
  | { kind: 'absent' }
  | { kind: 'malformed'; message: string }
  | { kind: 'read'; hash: boolean; issuerSerial: boolean | null };

/**
 * Reads the signingCertificateV2 (or else v1) signed attribute and compares its first ESSCertID with `cert`.
 */
export async function essFinding(p: ParsedSignedData, cert: pkijs.Certificate): Promise<EssFinding> {
  const attrs = p.signerInfo.signedAttrs?.attributes ?? [];
  const attribute =
    attrs.find((a) => a.type === OID.signingCertificateV2) ??
    attrs.find((a) => a.type === OID.signingCertificate);
  if (!attribute) return { kind: 'absent' };
  try {
    const first = readEssCertIds(attribute)[0];
    if (!first) throw new Error('no ESSCertID');
    return { kind: 'read', ...(await essCertIdMatches(first, cert)) };
  } catch (e) {
    return { kind: 'malformed', message: errorMessage(e) };
  }
}

/**
 * RFC 5035 / RFC 2634 (ESS): whether the first ESSCertID of the signingCertificateV2 (or v1) signed attribute
 * names `cert` (its hash, and its issuerSerial when present). `null` when there is no such attribute; false
 * when it is malformed.
 */
export async function essNamesCertificate(
  p: ParsedSignedData,
  cert: pkijs.Certificate,
): Promise<boolean | null> {
  const found = await essFinding(p, cert);
  if (found.kind === 'absent') return null;
  return found.kind === 'read' && found.hash && found.issuerSerial !== false;
}

/** The certificate's extended key usage extension (RFC 5280 4.2.1.12): its purposes (OIDs); null when absent. */
export function extendedKeyUsage(cert: pkijs.Certificate): { critical: boolean; purposes: string[] } | null {
  const eku = cert.extensions?.find((x) => x.extnID === OID.extKeyUsage);
  if (!eku) return null;
  const purposes = eku.parsedValue instanceof pkijs.ExtKeyUsage ? eku.parsedValue.keyPurposes : [];
  return { critical: eku.critical === true, purposes };
}

/** RFC 3161 2.3: exactly one extended key usage, id-kp-timeStamping, marked critical. */
export function hasCriticalTimeStampingEku(cert: pkijs.Certificate): boolean {
  const eku = extendedKeyUsage(cert);
  return eku?.critical === true && eku.purposes.length === 1 && eku.purposes[0] === OID.timeStamping;
}

/** The hex SHA-256 fingerprint of a certificate, for evidence. */
export async function fingerprint(cert: pkijs.Certificate): Promise<string> {
  return toHex(await digest(certificateDer(cert)));
}
