import { asn1js, pkijs } from '@notary/trust/asn1';
import { DIGEST_BY_OID, digest, equalBytes, toArrayBuffer, toHex } from '@notary/trust/bytes';
import { chainsTo } from '@notary/trust/cert-path';
import {
  OID,
  type ParsedSignedData,
  parseSignedData,
  signerCertificate,
  subjectName,
  verifySignerInfo,
} from '@notary/trust/cms';
import { errorMessage } from './error-message.ts';
import { type PdfSignature, PdfSignatureError, readPdfSignatures, signedContent } from './pdf-signatures.ts';
import type { ReceiptOriginalSignature, ReceiptOriginalSignatures } from './receipt.ts';

/**
 * The signatures a PDF already carries when it is notarized, described as a validator's report would at that
 * time (the certificate lists them, the receipt carries them as `originalSignatures`): for each signature
 * dictionary (ISO 32000-1 12.8.1) or document timestamp (ETSI EN 319 142-1 5.4.3), who signed it and who
 * issued that certificate, the claimed time (`/M`) and the signature timestamp (RFC 3161 over the signature
 * value, ETSI EN 319 122-1 5.3), `/SubFilter` and the signature policy (ETSI EN 319 122-1 5.2.9,
 * DOC-ICP-15.03), which revision its /ByteRange covers, whether the digest and the signature check out
 * (RFC 5652 5.4, 5.6), whether the signer chains to one of the given anchors at the given time, and whether
 * validation data is embedded (/DSS, /VRI: ETSI EN 319 142-1 5.4.2; revocation values inside the CMS).
 *
 * A broken or unreadable signature is described as such, never thrown. Bounds: those of `readPdfSignatures`
 * (at most 64 signatures, 1 MiB of CMS each); pdf-lib parses the whole file, so callers run this on untrusted
 * input only where memory, time and stream decoding are bounded (the service does it in a bounded worker).
 */

/** The signature policy identifier signed attribute (ETSI EN 319 122-1 5.2.9; RFC 5126 5.8.1). */
const SIG_POLICY_ID = '1.2.840.113549.1.9.16.2.15';
/** The CMS signingTime signed attribute (RFC 5652 11.3). */
const SIGNING_TIME = '1.2.840.113549.1.9.5';
/** Adobe's revocation values signed attribute (ISO 32000-1 12.8.3.3.2, `adbe-revocationInfoArchival`). */
const ADBE_REVOCATION = '1.2.840.113583.1.1.8';

/**
 * What a validator's report says of one signature already in the original: the receipt's
 * `originalSignatures.signatures[]` (its schema documents each field).
 */
export type OriginalSignature = ReceiptOriginalSignature;

/** The outcome of reading the original's signatures: the receipt's `originalSignatures`. */
export type OriginalSignatures = ReceiptOriginalSignatures;

/** Options of `describeOriginalSignatures`. */
export interface DescribeOptions {
  /** The time the chain is judged at: the notarization time. */
  at: Date;
  /** DER certificates a signer may chain to, with the name to report; none: chains are not checked. */
  anchors?: readonly Uint8Array[];
}

/**
 * Describes every signature `pdf` carries (see the module comment). A PDF without a signature dictionary reads
 * as `{status: 'read', signatures: []}`; one whose signatures cannot be listed (no readable PDF, malformed
 * /ByteRange or /Contents, past the bounds) as `unreadable` with the reason. Never throws for the input.
 */
export async function describeOriginalSignatures(
  pdf: Uint8Array,
  options: DescribeOptions,
): Promise<OriginalSignatures> {
  let read: Awaited<ReturnType<typeof readPdfSignatures>>;
  try {
    read = await readPdfSignatures(pdf);
  } catch (e) {
    return { status: 'unreadable', reason: e instanceof PdfSignatureError ? e.message : String(e) };
  }
  const anchors = parseAnchors(options.anchors ?? []);
  const out: OriginalSignature[] = [];
  for (const [i, sig] of read.signatures.entries()) {
    out.push(await describeOne(pdf, sig, i + 1, read, anchors, options.at));
  }
  return { status: 'read', revisions: read.revisions.length, signatures: out };
}

function parseAnchors(ders: readonly Uint8Array[]): { der: Uint8Array; name: string }[] {
  const out: { der: Uint8Array; name: string }[] = [];
  for (const der of ders) {
    try {
      out.push({ der, name: subjectName(pkijs.Certificate.fromBER(toArrayBuffer(der))) });
    } catch {
      // An anchor that does not parse anchors nothing.
    }
  }
  return out;
}

async function describeOne(
  pdf: Uint8Array,
  sig: PdfSignature,
  index: number,
  read: Awaited<ReturnType<typeof readPdfSignatures>>,
  anchors: { der: Uint8Array; name: string }[],
  at: Date,
): Promise<OriginalSignature> {
  // Writers differ on what the /VRI key hashes: the whole /Contents string (its zero padding too) or the
  // DER signature alone; either names this signature.
  const vriKeys = [sig.contents, sig.cms].map(async (bytes) =>
    toHex(await digest(bytes, 'SHA-1')).toUpperCase(),
  );
  const keys = await Promise.all(vriKeys);
  const facts: OriginalSignature = {
    index,
    kind: sig.documentTimestamp ? 'document-timestamp' : 'signature',
    signer: null,
    issuer: null,
    serialNumber: null,
    claimedTime: sig.signingTime ? sig.signingTime.toISOString() : null,
    signingTime: null,
    timestamp: null,
    filter: sig.filter,
    subFilter: sig.subFilter,
    policyOid: null,
    coverage: {
      wellFormed: sig.coverage.wellFormed,
      problem: sig.coverage.problem,
      revision: sig.coverage.revision >= 0 ? sig.coverage.revision + 1 : null,
      wholeOriginal: sig.coverage.wholeFile,
      bytesAfter: sig.coverage.bytesAfter,
    },
    integrity: { digestAlgorithm: null, digest: null, signature: null },
    chain: { status: 'not-checked', anchor: null, message: 'not checked against a trust anchor' },
    revocation: {
      dss: read.dss !== null,
      vri: keys.some((key) => read.dss?.vri.has(key) === true),
      dssOcsps: read.dss?.ocsps.length ?? 0,
      dssCrls: read.dss?.crls.length ?? 0,
      inSignature: false,
    },
    problem: null,
  };
  let parsed: ParsedSignedData;
  try {
    parsed = parseSignedData(sig.cms, sig.documentTimestamp ? 'document timestamp' : 'signature');
  } catch (e) {
    facts.problem = `the CMS does not read: ${errorMessage(e)}`;
    return facts;
  }
  const cert = signerCertificate(parsed);
  if (cert) {
    facts.signer = subjectName(cert);
    facts.issuer = issuerName(cert);
    facts.serialNumber = toHex(new Uint8Array(cert.serialNumber.valueBlock.valueHexView));
  }
  const attrs = parsed.signerInfo.signedAttrs?.attributes ?? [];
  facts.signingTime = signingTimeOf(attrs);
  facts.policyOid = policyOidOf(attrs);
  facts.revocation.inSignature =
    (parsed.signedData.crls?.length ?? 0) > 0 || attrs.some((a) => a.type === ADBE_REVOCATION);
  facts.integrity.digestAlgorithm = DIGEST_BY_OID[parsed.signerInfo.digestAlgorithm.algorithmId] ?? null;
  // The signed bytes are checked whenever the ranges lie in the file, even around a gap that is not exactly
  // the /Contents string (reported in `coverage`): a validator reports the digest of what was signed.
  const [start, a, b, c] = sig.byteRange;
  const content = start === 0 && a < b && b + c <= pdf.length ? signedContent(pdf, sig) : null;
  try {
    if (sig.documentTimestamp) {
      const token = await readToken(parsed, cert, content);
      facts.timestamp = token;
      facts.integrity.digest = token ? token.imprint : null;
      facts.integrity.signature = token ? token.signature : null;
    } else if (cert && content) {
      const checked = await verifyDetachedOrSha1(parsed, cert, content);
      facts.integrity.digest = checked.digest;
      facts.integrity.signature = checked.signature;
    }
    if (!sig.documentTimestamp) facts.timestamp = await signatureTimestamp(parsed);
  } catch (e) {
    facts.problem = `the signature does not check: ${errorMessage(e)}`;
  }
  if (!cert) facts.problem ??= 'the CMS does not carry the certificate its SignerInfo names';
  else if (!content) facts.problem ??= `the /ByteRange does not fit: ${sig.coverage.problem ?? 'malformed'}`;
  if (cert && anchors.length > 0) facts.chain = await chainOf(cert, parsed.certificates, anchors, at);
  return facts;
}

/** The issuer's name, written as `subjectName` writes a subject (CN, O, C by short name). */
function issuerName(cert: pkijs.Certificate): string {
  const short: Record<string, string> = { '2.5.4.3': 'CN', '2.5.4.10': 'O', '2.5.4.6': 'C' };
  return cert.issuer.typesAndValues
    .map((tv) => `${short[tv.type] ?? tv.type}=${String(tv.value.valueBlock.value)}`)
    .join(', ');
}

function signingTimeOf(attrs: pkijs.Attribute[]): string | null {
  const value: unknown = attrs.find((a) => a.type === SIGNING_TIME)?.values[0];
  if (value instanceof asn1js.UTCTime || value instanceof asn1js.GeneralizedTime) {
    const date = value.toDate();
    return Number.isNaN(date.getTime()) ? null : date.toISOString();
  }
  return null;
}

/** SignaturePolicyIdentifier ::= CHOICE { signaturePolicyId SEQUENCE { sigPolicyId OID, ... }, implied NULL }. */
function policyOidOf(attrs: pkijs.Attribute[]): string | null {
  const value: unknown = attrs.find((a) => a.type === SIG_POLICY_ID)?.values[0];
  if (!(value instanceof asn1js.Sequence)) return null;
  const first = value.valueBlock.value[0];
  return first instanceof asn1js.ObjectIdentifier ? first.valueBlock.toString() : null;
}

/**
 * RFC 5652 5.4 for a detached CMS (ETSI.CAdES.detached, PBAD.PAdES, adbe.pkcs7.detached): messageDigest is the
 * digest of the signed bytes. For adbe.pkcs7.sha1 (ISO 32000-1 12.8.3.3.1) the encapsulated content is the
 * SHA-1 of the signed bytes, and messageDigest that content's digest.
 */
async function verifyDetachedOrSha1(
  parsed: ParsedSignedData,
  cert: pkijs.Certificate,
  content: Uint8Array,
): Promise<{ digest: boolean; signature: boolean }> {
  const eContent = parsed.signedData.encapContentInfo.eContent;
  if (eContent) {
    const inner = new Uint8Array(eContent.getValue());
    const checked = await verifySignerInfo(
      parsed,
      cert,
      inner,
      parsed.signedData.encapContentInfo.eContentType,
    );
    const sha1 = await digest(content, 'SHA-1');
    return { digest: checked.messageDigest && equalBytes(inner, sha1), signature: checked.signature };
  }
  const checked = await verifySignerInfo(parsed, cert, content, OID.data);
  return { digest: checked.messageDigest, signature: checked.signature };
}

/** The TSTInfo of a token and whether its imprint is the digest of `imprinted` and its signature verifies. */
async function readToken(
  parsed: ParsedSignedData,
  cert: pkijs.Certificate | null,
  imprinted: Uint8Array | null,
): Promise<OriginalSignature['timestamp']> {
  if (parsed.signedData.encapContentInfo.eContentType !== OID.tstInfo) return null;
  const eContent = parsed.signedData.encapContentInfo.eContent;
  if (!eContent) return null;
  const tstDer = new Uint8Array(eContent.getValue());
  const tst = pkijs.TSTInfo.fromBER(toArrayBuffer(tstDer));
  const algorithm = DIGEST_BY_OID[tst.messageImprint.hashAlgorithm.algorithmId];
  const hashed = new Uint8Array(tst.messageImprint.hashedMessage.valueBlock.valueHexView);
  const imprint =
    algorithm !== undefined && imprinted !== null && equalBytes(hashed, await digest(imprinted, algorithm));
  const checked = cert ? await verifySignerInfo(parsed, cert, tstDer, OID.tstInfo) : null;
  const signature = checked?.signature === true && checked.messageDigest;
  return { genTime: tst.genTime.toISOString(), tsa: cert ? subjectName(cert) : null, imprint, signature };
}

/** The signature timestamp (unsigned attribute, RFC 3161 Appendix A) over the SignerInfo's signature value. */
async function signatureTimestamp(parsed: ParsedSignedData): Promise<OriginalSignature['timestamp']> {
  const attribute = parsed.signerInfo.unsignedAttrs?.attributes.find(
    (a) => a.type === OID.signatureTimeStampToken,
  );
  const value: unknown = attribute?.values[0];
  if (!(value instanceof asn1js.Sequence)) return null;
  const token = parseSignedData(new Uint8Array(value.toBER(false)), 'signature timestamp');
  const signatureValue = new Uint8Array(parsed.signerInfo.signature.valueBlock.valueHexView);
  return readToken(token, signerCertificate(token), signatureValue);
}

/** The first anchor `cert` chains to at `at`, through the certificates the CMS carries. */
async function chainOf(
  cert: pkijs.Certificate,
  carried: pkijs.Certificate[],
  anchors: { der: Uint8Array; name: string }[],
  at: Date,
): Promise<OriginalSignature['chain']> {
  let last = '';
  for (const anchor of anchors) {
    const result = await chainsTo(cert, carried, [anchor.der], at);
    if (result.ok) return { status: 'trusted', anchor: anchor.name, message: `chains to ${anchor.name}` };
    last = result.message;
  }
  return { status: 'untrusted', anchor: null, message: `chains to none of the trust anchors (${last})` };
}
