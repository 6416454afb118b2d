/**
 * CAdES signature of the notarization certificate PDF: the CMS that goes into the PDF's `/Contents`
 * (PAdES, ETSI EN 319 142-1 baseline B-B, or B-T with a signature timestamp). Built with pkijs and asn1js; the private
 * key stays behind a `CmsSigner` (the server's signer port, a KMS or an HSM alike).
 *
 * Sources: RFC 5652 (CMS), RFC 5035 (ESS signingCertificateV2), RFC 3161 appendix A (signature timestamp),
 * ETSI EN 319 122-1 (CAdES baseline attributes), ETSI EN 319 142-1 (PAdES baseline).
 */
import { createHash } from 'node:crypto';
import { certificateFromDer } from '@notary/trust/cms';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

/** Signature algorithms of a `CmsSigner` (SHA-256): RSA PKCS#1 v1.5 (RFC 8017) or ECDSA P-256 (RFC 5758). */
export type SignatureAlgorithm = 'RSASSA-PKCS1-v1_5-SHA256' | 'ECDSA-P256-SHA256';

/**
 * What building a CMS signature needs of a signing key; the private key stays behind it. The server's signer
 * port (`server/src/ports/signer.ts`) has this shape.
 */
export interface CmsSigner {
  /** DER X.509 certificates: the signer's first, then the chain up to (optionally including) the root. */
  readonly certificateChain: readonly Uint8Array[];
  readonly algorithm: SignatureAlgorithm;
  /**
   * Signs `data` (the DER of the CMS signed attributes, RFC 5652 section 5.4) with SHA-256 and the key's
   * algorithm. RSA: PKCS#1 v1.5 signature bytes. ECDSA: the DER `Ecdsa-Sig-Value` (RFC 3279).
   */
  sign(data: Uint8Array): Promise<Uint8Array>;
}

/**
 * What a signature timestamp (PAdES B-T) needs of an RFC 3161 Time-Stamp Authority: a checked
 * `TimeStampToken` (DER CMS `ContentInfo`) over a 32-byte SHA-256 digest. The server's TSA port
 * (`server/src/ports/tsa.ts`) has this shape.
 */
export interface SignatureTimestamper {
  timestamp(digest: Uint8Array): Promise<{ token: Uint8Array }>;
}

/**
 * A `SignatureTimestamper` that also returns the chain it verified the token's TSA certificate with (DER: the
 * TSA certificate, then its path to the timestamper's trust anchors). PAdES B-LT and B-LTA gather revocation
 * data for this chain only: the certificate set a token carries is outside its signature (RFC 5652 5.1), so
 * anyone on the way to the TSA can add certificates to it, naming any responder URL.
 */
export interface VerifiedTimestamper {
  timestamp(digest: Uint8Array): Promise<{ token: Uint8Array; chain: readonly Uint8Array[] }>;
}

export const OID = {
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingTime: '1.2.840.113549.1.9.5',
  /** ESS SigningCertificate (RFC 2634): ESSCertID with a SHA-1 hash. */
  signingCertificate: '1.2.840.113549.1.9.16.2.12',
  /** ESS SigningCertificateV2 (RFC 5035): ESSCertIDv2 with any hash, SHA-256 by default. */
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  /** id-aa-signatureTimeStampToken (RFC 3161 appendix A). */
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14',
  /** id-aa-ets-sigPolicyId (RFC 5126 5.8.1): the signature-policy-identifier signed attribute. */
  sigPolicyId: '1.2.840.113549.1.9.16.2.15',
  /** id-spq-ets-uri (RFC 5126 5.8.1): a SigPolicyQualifierInfo holding the policy's URL. */
  spqEtsUri: '1.2.840.113549.1.9.16.5.1',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  sha384: '2.16.840.1.101.3.4.2.2',
  sha512: '2.16.840.1.101.3.4.2.3',
  sha256WithRSAEncryption: '1.2.840.113549.1.1.11',
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
} as const;

/**
 * A signature policy to sign under (RFC 5126 5.8.1, ETSI EN 319 122-1 5.2.9 signature-policy-identifier):
 * the policy OID, the digest algorithm OID and hash of the policy document as the policy defines it, and
 * optionally its URL (one `spuri` qualifier). ICP-Brasil values: `icp-brasil.ts`.
 */
export interface SignaturePolicyReference {
  oid: string;
  hashAlgorithm: string;
  hash: Uint8Array;
  uri?: string;
}

/** Options of `buildCadesSignature`. */
export interface CadesOptions {
  /** Adds the signature-policy-identifier signed attribute (CAdES-EPES; required by ICP-Brasil policies). */
  policy?: SignaturePolicyReference;
}

export const sha256 = (data: Uint8Array): Uint8Array =>
  new Uint8Array(createHash('sha256').update(data).digest());

/**
 * Builds a detached CAdES signature over `data` (for PAdES: the PDF bytes covered by `/ByteRange`).
 *
 * Output: DER `ContentInfo` of a `SignedData` (RFC 5652) with
 * - no `eContent` (detached), `eContentType` id-data, digest SHA-256;
 * - certificates: `signer.certificateChain` as given;
 * - one `SignerInfo`, `sid` issuerAndSerialNumber, signed attributes exactly contentType (id-data),
 *   messageDigest and signingCertificateV2 (RFC 5035: SHA-256 of the signer certificate, hashAlgorithm omitted
 *   as the default, with issuerSerial), plus with `options.policy` the signature-policy-identifier
 *   (SignaturePolicyId { sigPolicyId, sigPolicyHash, sigPolicyQualifiers: one spuri when `uri` is given },
 *   hash AlgorithmIdentifier without parameters: DOC-ICP-15.03 Anexo 1 Notas 1 and 3). No signingTime: PAdES
 *   baseline forbids it (and so does DOC-ICP-15.03 Tabela A.14), the time is the PDF's /M;
 * - signatureAlgorithm sha256WithRSAEncryption or ecdsa-with-SHA256 per `signer.algorithm`;
 * - with `tsa` (PAdES B-T): the unsigned attribute id-aa-signatureTimeStampToken holding the TSA token over
 *   SHA-256 of the signature value (RFC 3161 appendix A).
 *
 * @throws whatever `signer.sign` or `tsa.timestamp` throw (the server's TSA: `AppError('BAD_GATEWAY')`);
 *   Error when the chain is empty or the signer certificate does not parse.
 */
export async function buildCadesSignature(
  data: Uint8Array,
  signer: CmsSigner,
  tsa?: SignatureTimestamper,
  options: CadesOptions = {},
): Promise<Uint8Array> {
  const signerDer = signer.certificateChain[0];
  if (!signerDer) throw new Error('CAdES: the signer has no certificate');
  // Read once per certificate (the signer's chain is the same for every certificate the service signs).
  const certificates = signer.certificateChain.map(certificateFromDer);
  const signerCert = certificates[0] as pkijs.Certificate;

  const { attributes: signedAttributes, der: signedAttrsDer } = cadesSignedAttributes(
    data,
    signerDer,
    options,
  );
  const signature = await signer.sign(signedAttrsDer);

  const signerInfo = new pkijs.SignerInfo({
    version: 1,
    sid: new pkijs.IssuerAndSerialNumber({
      issuer: signerCert.issuer,
      serialNumber: signerCert.serialNumber,
    }),
    // RFC 5754: SHA-2 digest AlgorithmIdentifiers SHOULD omit the parameters.
    digestAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }),
    signedAttrs: new pkijs.SignedAndUnsignedAttributes({ type: 0, attributes: signedAttributes }),
    signatureAlgorithm:
      signer.algorithm === 'RSASSA-PKCS1-v1_5-SHA256'
        ? // RFC 4055: NULL parameters for the RSA PKCS#1 v1.5 signature OIDs.
          new pkijs.AlgorithmIdentifier({
            algorithmId: OID.sha256WithRSAEncryption,
            algorithmParams: new asn1js.Null(),
          })
        : // RFC 5758: no parameters for ecdsa-with-SHA256.
          new pkijs.AlgorithmIdentifier({ algorithmId: OID.ecdsaWithSHA256 }),
    signature: new asn1js.OctetString({ valueHex: signature }),
  });

  if (tsa) {
    const { token } = await tsa.timestamp(sha256(signature));
    signerInfo.unsignedAttrs = new pkijs.SignedAndUnsignedAttributes({
      type: 1,
      attributes: [
        new pkijs.Attribute({ type: OID.signatureTimeStampToken, values: [parseDer(token, 'TSA token')] }),
      ],
    });
  }

  const signedData = new pkijs.SignedData({
    version: 1,
    digestAlgorithms: [new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 })],
    encapContentInfo: new pkijs.EncapsulatedContentInfo({ eContentType: OID.data }),
    certificates,
    signerInfos: [signerInfo],
  });
  const contentInfo = new pkijs.ContentInfo({
    contentType: OID.signedData,
    content: signedData.toSchema(true),
  });
  return new Uint8Array(contentInfo.toSchema().toBER(false));
}

/**
 * The CAdES signed attributes `buildCadesSignature` signs over `data` for the signer certificate `signerDer`:
 * contentType (id-data), messageDigest (SHA-256 of `data`), signingCertificateV2 and, with `options.policy`,
 * the signature-policy-identifier, in DER order; `der` is their DER as the SET OF the signature covers
 * (RFC 5652 5.4, tag 0x31). Deterministic: the same inputs give the same bytes, so a signature made elsewhere
 * over `der` (deferred signing on a token) fits the CMS `buildCadesSignature` builds for the same inputs.
 * @throws Error when `signerDer` does not parse.
 */
export function cadesSignedAttributes(
  data: Uint8Array,
  signerDer: Uint8Array,
  options: CadesOptions = {},
): { attributes: pkijs.Attribute[]; der: Uint8Array } {
  const signerCert = certificateFromDer(signerDer);
  const attributes = sortedForDer([
    new pkijs.Attribute({
      type: OID.contentType,
      values: [new asn1js.ObjectIdentifier({ value: OID.data })],
    }),
    new pkijs.Attribute({
      type: OID.messageDigest,
      values: [new asn1js.OctetString({ valueHex: sha256(data) })],
    }),
    new pkijs.Attribute({
      type: OID.signingCertificateV2,
      values: [signingCertificateV2(signerDer, signerCert)],
    }),
    ...(options.policy
      ? [new pkijs.Attribute({ type: OID.sigPolicyId, values: [signaturePolicyId(options.policy)] })]
      : []),
  ]);
  // RFC 5652 5.4: the signature covers the DER of the attributes as a SET OF (tag 0x31); they are stored in
  // the SignerInfo as [0] IMPLICIT with the same content.
  const der = new Uint8Array(new asn1js.Set({ value: attributes.map((a) => a.toSchema()) }).toBER(false));
  return { attributes, der };
}

/**
 * SigningCertificateV2 ::= SEQUENCE { certs SEQUENCE OF ESSCertIDv2 } with one ESSCertIDv2
 * { certHash = SHA-256(cert DER), issuerSerial } (RFC 5035 section 3); hashAlgorithm omitted: DER leaves out a
 * DEFAULT value and SHA-256 is the default.
 */
function signingCertificateV2(certDer: Uint8Array, cert: pkijs.Certificate): asn1js.Sequence {
  const issuerSerial = new pkijs.IssuerSerial({
    issuer: new pkijs.GeneralNames({ names: [new pkijs.GeneralName({ type: 4, value: cert.issuer })] }),
    serialNumber: cert.serialNumber,
  });
  const essCertIdV2 = new asn1js.Sequence({
    value: [new asn1js.OctetString({ valueHex: sha256(certDer) }), issuerSerial.toSchema()],
  });
  return new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [essCertIdV2] })] });
}

/**
 * SignaturePolicyId ::= SEQUENCE { sigPolicyId OID, sigPolicyHash OtherHashAlgAndValue,
 * sigPolicyQualifiers SEQUENCE OF SigPolicyQualifierInfo OPTIONAL } (RFC 5126 5.8.1), the explicit choice of
 * SignaturePolicyIdentifier; the qualifier, when a URI is given, is { id-spq-ets-uri, IA5String uri }.
 */
function signaturePolicyId(policy: SignaturePolicyReference): asn1js.Sequence {
  const fields: asn1js.AsnType[] = [
    new asn1js.ObjectIdentifier({ value: policy.oid }),
    new asn1js.Sequence({
      value: [
        new pkijs.AlgorithmIdentifier({ algorithmId: policy.hashAlgorithm }).toSchema(),
        new asn1js.OctetString({ valueHex: policy.hash }),
      ],
    }),
  ];
  if (policy.uri !== undefined) {
    fields.push(
      new asn1js.Sequence({
        value: [
          new asn1js.Sequence({
            value: [
              new asn1js.ObjectIdentifier({ value: OID.spqEtsUri }),
              new asn1js.IA5String({ value: policy.uri }),
            ],
          }),
        ],
      }),
    );
  }
  return new asn1js.Sequence({ value: fields });
}

/** DER orders a SET OF by the encodings of its elements (X.690 11.6); asn1js keeps the given order. */
function sortedForDer(attributes: pkijs.Attribute[]): pkijs.Attribute[] {
  const encoded = attributes.map((a) => ({ a, der: Buffer.from(a.toSchema().toBER(false)) }));
  encoded.sort((x, y) => Buffer.compare(x.der, y.der));
  return encoded.map((e) => e.a);
}

/** Parses one DER/BER value; Error naming `what` if it does not parse or has trailing bytes. */
export function parseDer(der: Uint8Array, what: string): asn1js.AsnType {
  const parsed = asn1js.fromBER(der);
  if (parsed.offset === -1) throw new Error(`${what}: not DER (${parsed.result.error})`);
  if (parsed.offset !== der.byteLength) throw new Error(`${what}: trailing bytes after the DER value`);
  return parsed.result;
}
