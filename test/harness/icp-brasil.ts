/**
 * Test fixtures for the ICP-Brasil profile tests: PDFs signed by the test PKI (test/harness/pki.ts) under an
 * ICP-Brasil policy with the writer's own code (`addSignaturePlaceholder` with the PBAD dictionary,
 * `buildCadesSignature` with the policy), optionally with a signature timestamp from the loopback TSA, and
 * variants that break one table row on purpose (an ETSI dictionary, a signingTime, the LPA's file hash).
 */
import { createPrivateKey, sign as cryptoSign } from 'node:crypto';
import { asn1js, pkijs } from '@notary/pdf/asn1';
import {
  buildCadesSignature,
  type CmsSigner,
  OID,
  type SignaturePolicyReference,
  type SignatureTimestamper,
  type VerifiedTimestamper,
} from '@notary/pdf/cades';
import { type IcpBrasilPolicyName, icpBrasilSignaturePolicy } from '@notary/pdf/icp-brasil';
import { addSignaturePlaceholder } from '@notary/pdf/placeholder';
import { SignPdf } from '@signpdf/signpdf';
import { Signer } from '@signpdf/utils';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { pemCmsSigner } from './pades-pdfs';
import type { TestPki } from './pki';

/** The test PKI's RSA signer as a `CmsSigner` (node:crypto, PKCS#1 v1.5 SHA-256). */
export function rsaCmsSigner(pki: TestPki): CmsSigner {
  return pemCmsSigner(pki.rsa.keyPem, pki.rsa.chainPem);
}

/** The test PKI's EC P-256 signer as a `CmsSigner` (node:crypto, DER Ecdsa-Sig-Value). */
export function ecCmsSigner(pki: TestPki): CmsSigner {
  return pemCmsSigner(pki.ec.keyPem, pki.ec.chainPem, 'ECDSA-P256-SHA256');
}

/**
 * The certificates (DER) a token of a test TSA carries, standing for the chain a real timestamper verifies
 * (`VerifiedTimestamper`): the test TSAs are trusted as they are.
 */
export function trustedTokenChain(token: Uint8Array): Uint8Array[] {
  const info = pkijs.ContentInfo.fromBER(new Uint8Array(token));
  const signed = new pkijs.SignedData({ schema: info.content });
  return (signed.certificates ?? [])
    .filter((c): c is pkijs.Certificate => c instanceof pkijs.Certificate)
    .map((c) => new Uint8Array(c.toSchema().toBER(false)));
}

/**
 * An RFC 3161 client of the loopback TSA (pkijs TimeStampReq/Resp, certReq so the token carries its chain),
 * its chain as `trustedTokenChain` reads it.
 */
export function tsaClient(url: string): VerifiedTimestamper {
  return {
    async timestamp(digest) {
      const request = new pkijs.TimeStampReq({
        version: 1,
        messageImprint: new pkijs.MessageImprint({
          hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 }),
          hashedMessage: new asn1js.OctetString({ valueHex: digest }),
        }),
        certReq: true,
      });
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/timestamp-query' },
        body: new Uint8Array(request.toSchema().toBER(false)),
      });
      const resp = pkijs.TimeStampResp.fromBER(await response.arrayBuffer());
      if (!resp.timeStampToken) throw new Error('TSA: no token');
      const token = new Uint8Array(resp.timeStampToken.toSchema().toBER(false));
      return { token, chain: trustedTokenChain(token) };
    },
  };
}

export interface IcpVariant {
  /** Sign under this policy (default: the policy of the case; null: no signature-policy-identifier). */
  policy?: SignaturePolicyReference | null;
  /** Add a signingTime signed attribute (forbidden by Tabela A.14). */
  signingTime?: boolean;
  /** Keep the ETSI dictionary (Adobe.PPKLite / ETSI.CAdES.detached) instead of the PBAD one. */
  etsiDictionary?: boolean;
  tsa?: SignatureTimestamper;
  /** Another signer than the PKI's RSA one. */
  signer?: CmsSigner;
}

/**
 * A one-page PDF signed under `name` by `signer`; returns the PDF and the CMS DER of its /Contents.
 * With `signingTime`, the signed attributes get a signingTime and are signed again with the test key (the
 * writer never adds one: this is how a non-conformant signature from elsewhere looks).
 */
export async function signedUnderPolicy(
  pki: TestPki,
  name: IcpBrasilPolicyName,
  variant: IcpVariant = {},
): Promise<{ pdf: Uint8Array; cms: Uint8Array }> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  page.drawText('ICP-Brasil policy test', {
    x: 50,
    y: 780,
    size: 18,
    font: await doc.embedFont(StandardFonts.Helvetica),
  });
  addSignaturePlaceholder(doc, [page], {
    signatureLength: 32768,
    reason: 'Notarization certificate',
    location: 'Test',
    name: 'Notary',
    contactInfo: 'notary@example.test',
    dictionary: variant.etsiDictionary ? 'etsi' : 'icp-brasil',
  });
  const placeholder = await doc.save({ useObjectStreams: false });
  const signer = variant.signer ?? rsaCmsSigner(pki);
  const policy = variant.policy === undefined ? icpBrasilSignaturePolicy(name) : variant.policy;
  let cms: Uint8Array = new Uint8Array();
  class TestSigner extends Signer {
    override async sign(pdfBuffer: Buffer): Promise<Buffer> {
      cms = await buildCadesSignature(
        new Uint8Array(pdfBuffer),
        signer,
        variant.tsa,
        policy ? { policy } : {},
      );
      if (variant.signingTime) cms = withSigningTime(cms, pki);
      return Buffer.from(cms);
    }
  }
  const pdf = new Uint8Array(await new SignPdf().sign(Buffer.from(placeholder), new TestSigner()));
  return { pdf, cms };
}

/** `cms` with a signingTime added to its signed attributes, re-signed with the test RSA key. */
function withSigningTime(cms: Uint8Array, pki: TestPki): Uint8Array {
  const contentInfo = pkijs.ContentInfo.fromBER(cms);
  const signedData = new pkijs.SignedData({ schema: contentInfo.content });
  const info = signedData.signerInfos[0] as pkijs.SignerInfo;
  const attrs = info.signedAttrs?.attributes ?? [];
  attrs.push(
    new pkijs.Attribute({ type: OID.signingTime, values: [new asn1js.UTCTime({ valueDate: new Date() })] }),
  );
  const sorted = attrs
    .map((a) => ({ a, der: Buffer.from(a.toSchema().toBER(false)) }))
    .sort((x, y) => Buffer.compare(x.der, y.der))
    .map((e) => e.a);
  info.signedAttrs = new pkijs.SignedAndUnsignedAttributes({ type: 0, attributes: sorted });
  const toSign = new Uint8Array(new asn1js.Set({ value: sorted.map((a) => a.toSchema()) }).toBER(false));
  info.signature = new asn1js.OctetString({
    valueHex: new Uint8Array(cryptoSign('sha256', toSign, createPrivateKey(pki.rsa.keyPem))),
  });
  const out = new pkijs.ContentInfo({ contentType: OID.signedData, content: signedData.toSchema(true) });
  return new Uint8Array(out.toSchema().toBER(false));
}
