/**
 * Deferred (external) PAdES signing: a second signer whose key never reaches this code (a tabelião's
 * ICP-Brasil A3 token, an A1 file opened in the browser) signs a certificate the service prepared. The
 * service adds the signer's field as an incremental update (the signatures already in the file stay valid),
 * answers the CAdES signed attributes to sign, and once the signature value comes back builds the CMS around it
 * and extends the file to B-LTA (DSS with every chain's revocation data, document timestamp).
 *
 * Sources: ISO 32000-1 12.8 (signature fields, incremental updates), RFC 5652 5.4 (what a SignerInfo's
 * signature covers), ETSI EN 319 142-1 (PAdES baseline levels), DOC-ICP-15.03 (ICP-Brasil policies).
 */
import { createVerify, X509Certificate } from 'node:crypto';
import { equalBytes } from '@notary/trust/bytes';
import { completeChain } from '@notary/trust/cert-path';
import {
  buildCadesSignature,
  type CadesOptions,
  type CmsSigner,
  cadesSignedAttributes,
  type SignatureAlgorithm,
  type SignaturePolicyReference,
  type SignatureTimestamper,
  type VerifiedTimestamper,
} from './cades';
import { appendDocumentTimestamp, fillByteRange, type LtvWriter, type SignatureFieldOptions } from './ltv';
import { boundedLtvWriter } from './ltv-bounded';
import {
  type GatherValidationData,
  PADES_MAX_CMS_BYTES,
  recordingChain,
  type SignatureLevel,
  uniqueDer,
  validationData,
} from './pades';

/** Bytes reserved for the external signer's CMS: as much as the service's own signature gets. */
export const DEFERRED_CMS_CAPACITY = PADES_MAX_CMS_BYTES;

/** A file with the external signer's field, and what that signer must sign. */
export interface PreparedDeferredSignature {
  /** The file with the field added and its /ByteRange fixed; /Contents still zeroed. */
  pdf: Uint8Array;
  /** DER of the CAdES signed attributes (SET OF) the signer signs with SHA-256 (RFC 5652 5.4). */
  signedAttributes: Uint8Array;
}

/** What the external signer's field and attributes declare. */
export interface DeferredSignatureOptions extends SignatureFieldOptions {
  /** The signer's certificate (DER): the signingCertificateV2 attribute binds the signature to it. */
  signerCertificate: Uint8Array;
  /** The signature policy declared (an ICP-Brasil one from `icp-brasil.ts`); none: plain CAdES-BES. */
  policy?: SignaturePolicyReference | undefined;
}

/**
 * Adds the external signer's field to `pdf` (`addSignatureField`, through `writer`: by default a bounded worker,
 * as the file may hold an uploaded original) and computes the signed
 * attributes over its byte range (`cadesSignedAttributes`: contentType, messageDigest, signingCertificateV2 of
 * `options.signerCertificate`, the policy when given).
 * @throws UnsoundPdfError as `addSignatureField`; Error when the update does not keep `pdf` as its prefix or
 *   the signer certificate does not parse.
 */
export async function prepareDeferredSignature(
  pdf: Uint8Array,
  options: DeferredSignatureOptions,
  writer: LtvWriter = boundedLtvWriter,
): Promise<PreparedDeferredSignature> {
  const { dictionary, name, reason, signingTime } = options;
  const withField = await writer.addSignatureField(pdf, DEFERRED_CMS_CAPACITY, {
    dictionary,
    name,
    reason,
    signingTime,
  });
  if (withField.length <= pdf.length || Buffer.compare(withField.subarray(0, pdf.length), pdf) !== 0) {
    throw new Error('deferred signature: the update does not keep the signed file as its prefix');
  }
  const { bytes } = fillByteRange(withField, pdf.length);
  const prepared = new Uint8Array(bytes);
  const { der } = cadesSignedAttributes(
    signedContent(prepared),
    options.signerCertificate,
    policyOf(options),
  );
  return { pdf: prepared, signedAttributes: der };
}

/**
 * The signature algorithm of a certificate's key as a `CmsSigner` states it: RSA (PKCS#1 v1.5 with SHA-256)
 * or EC P-256 (ECDSA with SHA-256); undefined for any other key (ICP-Brasil A3 tokens hold RSA keys).
 */
export function signatureAlgorithmOf(certificate: Uint8Array): SignatureAlgorithm | undefined {
  const key = new X509Certificate(certificate).publicKey;
  if (key.asymmetricKeyType === 'rsa') return 'RSASSA-PKCS1-v1_5-SHA256';
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') {
    return 'ECDSA-P256-SHA256';
  }
  return undefined;
}

/**
 * Whether `signature` is the signature of `certificate`'s key over `signedAttributes` with SHA-256 (RSA
 * PKCS#1 v1.5 bytes, or an ECDSA DER `Ecdsa-Sig-Value`, RFC 3279): what a token's C_Sign with CKM_SHA256_RSA_PKCS
 * (or CKM_ECDSA over the digest, DER-encoded) returns. False for anything that does not verify or parse.
 */
export function signatureVerifies(
  signedAttributes: Uint8Array,
  signature: Uint8Array,
  certificate: Uint8Array,
): boolean {
  try {
    const key = new X509Certificate(certificate).publicKey;
    return createVerify('sha256').update(signedAttributes).verify(key, signature);
  } catch {
    return false;
  }
}

/** What completing a deferred signature needs. */
export interface CompleteDeferredOptions {
  /** The signer's certificate, then its chain (DER), as announced when preparing. */
  certificates: readonly Uint8Array[];
  /** The signature value the signer made over `signedAttributes`. */
  signature: Uint8Array;
  /** The attributes answered when preparing: the CMS is built again and must give the same bytes. */
  signedAttributes: Uint8Array;
  policy?: SignaturePolicyReference | undefined;
  /** With a TSA, the signature gets its signature timestamp (B-T; ICP-Brasil AD-RT). */
  tsa?: SignatureTimestamper | undefined;
}

/**
 * Puts the external signer's CMS into the field `prepareDeferredSignature` added: the same signed attributes
 * (built again over the same byte range, and compared byte for byte), the signature value given, the announced
 * certificates, and the signature timestamp when `tsa` is given.
 * @returns the signed file (same length as `prepared`) and its CMS.
 * @throws Error when the key's algorithm is not supported, when the attributes built again differ (the file
 *   is not the one prepared), or when the CMS does not fit the field; the TSA's errors.
 */
export async function completeDeferredSignature(
  prepared: Uint8Array,
  options: CompleteDeferredOptions,
): Promise<{ pdf: Uint8Array; cms: Uint8Array }> {
  const leaf = options.certificates[0];
  if (!leaf) throw new Error('deferred signature: no signer certificate');
  const algorithm = signatureAlgorithmOf(leaf);
  if (!algorithm) throw new Error('deferred signature: the signer key is neither RSA nor EC P-256');
  const signer: CmsSigner = {
    certificateChain: options.certificates,
    algorithm,
    sign: async (data) => {
      if (!equalBytes(data, options.signedAttributes)) {
        throw new Error('deferred signature: the file is not the one whose attributes were signed');
      }
      return options.signature;
    },
  };
  const cms = await buildCadesSignature(signedContent(prepared), signer, options.tsa, policyOf(options));
  if (cms.byteLength > DEFERRED_CMS_CAPACITY) {
    throw new Error(`deferred signature: the CMS is ${cms.byteLength} bytes, more than its field holds`);
  }
  const [, contentsStart] = lastByteRange(prepared);
  const bytes = Buffer.from(prepared);
  bytes.write(Buffer.from(cms).toString('hex'), contentsStart + 1, 'latin1');
  return { pdf: new Uint8Array(bytes), cms };
}

/**
 * One signature of the file and its signer's chain (DER, leaf first), for the long-term data; without `cms`
 * (a signature whose own /VRI entry an earlier update already wrote) only its chain's data is added.
 */
export interface SignatureOfFile {
  cms?: Uint8Array | undefined;
  chain: readonly Uint8Array[];
}

/**
 * Extends a file holding `signatures` to B-LTA as `signPdfAtLevel` does for one: a /DSS update with every
 * signature's chain (completed from `issuers`) and what `gather` found for it, a /VRI entry per signature; then a
 * document timestamp and its TSA chain's data. `writer`: a bounded worker by default. B-LTA only when every chain was covered; else B-T with why.
 * @throws what `gather`, the writer and the TSA throw (a TSA failure is never a shortfall).
 */
export async function extendToLta(
  pdf: Uint8Array,
  signatures: readonly SignatureOfFile[],
  options: {
    tsa: VerifiedTimestamper;
    gather: GatherValidationData;
    issuers?: readonly Uint8Array[];
    writer?: LtvWriter;
  },
): Promise<{ pdf: Uint8Array; level: SignatureLevel; shortfall: string[] }> {
  const { tsa, gather, writer = boundedLtvWriter, issuers = [] } = options;
  const chain = await completeChain(uniqueDer(signatures.flatMap((s) => s.chain)), issuers);
  const first = await validationData(chain, gather);
  let out = await writer.appendValidationData(
    pdf,
    first.material,
    signatures.flatMap((s) => (s.cms ? [{ signatureContents: s.cms, ...first.material }] : [])),
  );
  const documentTsa = recordingChain(tsa);
  const stamped = await appendDocumentTimestamp(out, documentTsa, writer);
  const second = await validationData(
    await completeChain(uniqueDer(documentTsa.chain() ?? []), issuers),
    gather,
  );
  out = await writer.appendValidationData(stamped.pdf, second.material, [
    { signatureContents: stamped.token, ...second.material },
  ]);
  const shortfall = [...first.shortfall];
  for (const gap of second.shortfall) if (!shortfall.includes(gap)) shortfall.push(gap);
  return { pdf: out, level: shortfall.length === 0 ? 'B-LTA' : 'B-T', shortfall };
}

function policyOf(options: { policy?: SignaturePolicyReference | undefined }): CadesOptions {
  return options.policy ? { policy: options.policy } : {};
}

/** The last /ByteRange of the file (the field added last), as its four numbers. */
function lastByteRange(pdf: Uint8Array): [number, number, number, number] {
  const text = Buffer.from(pdf).toString('latin1');
  const at = text.lastIndexOf('/ByteRange');
  const match =
    at === -1 ? null : /^\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/.exec(text.slice(at));
  if (!match) throw new Error('deferred signature: the file has no filled /ByteRange');
  const [a, b, c, d] = match.slice(1, 5).map(Number) as [number, number, number, number];
  if (a !== 0 || b >= c || c + d !== pdf.length) {
    throw new Error('deferred signature: the last /ByteRange does not cover the file but its /Contents');
  }
  return [a, b, c, d];
}

/** The bytes the last /ByteRange covers: the file without the /Contents hex string. */
function signedContent(pdf: Uint8Array): Uint8Array {
  const [, b, c] = lastByteRange(pdf);
  return Buffer.concat([pdf.subarray(0, b), pdf.subarray(c)]);
}
