import { buildCadesSignature, type CmsSigner, type SignatureTimestamper } from '@notary/pdf/cades';
import { signPdf } from '@notary/pdf/pades';
import { loadFileSigner } from '@notary/server/adapters/signer/file';
import { HttpTimestampAuthority } from '@notary/server/adapters/tsa/http';
import { SignPdf } from '@signpdf/signpdf';
import { Signer, SUBFILTER_ETSI_CADES_DETACHED } from '@signpdf/utils';
import { placeholderPdf as onePagePlaceholderPdf } from './pades-pdfs';
import type { TestPki } from './pki';
import type { TestTsa } from './tsa';

/**
 * PDFs signed the way other signers sign them, for tests of what the service reports of an uploaded PDF's own
 * signatures: a one-page PDF with a signature placeholder signed by `signPdf` (the test PKI's RSA signer,
 * optionally with a signature timestamp from the loopback TSA), a policy-bearing ICP-Brasil-shaped one
 * (`/SubFilter /PBAD.PAdES`, signature-policy-identifier), and an incremental update appended after signing.
 */

/** The test PKI's RSA signer (PKCS#12). */
export function rsaSigner(pki: TestPki): Promise<CmsSigner> {
  return loadFileSigner({ pkcs12: pki.rsa.p12, password: pki.p12Password });
}

/** An RFC 3161 client of the loopback TSA, trusting the test PKI. */
export function tsaClient(pki: TestPki, tsa: TestTsa): SignatureTimestamper {
  return new HttpTimestampAuthority({
    url: tsa.url,
    trustedCertificates: [pki.root.certDer, pki.intermediate.certDer],
    timeoutMs: 10_000,
  });
}

/** A one-page PDF with a signature placeholder of `subFilter` (no object streams, so @signpdf finds it). */
export function placeholderPdf(subFilter: string = SUBFILTER_ETSI_CADES_DETACHED): Promise<Uint8Array> {
  return onePagePlaceholderPdf({
    text: 'Signed original',
    subFilter,
    signatureLength: 16384,
    signer: {
      name: 'Test Signer',
      reason: 'Test signature',
      contactInfo: 'signer@example.test',
      location: 'Test',
    },
  });
}

/** A PDF signed by `signPdf` (PAdES B-B, or B-T with `tsa`). */
export async function signedPdf(signer: CmsSigner, tsa?: SignatureTimestamper): Promise<Uint8Array> {
  return signPdf(await placeholderPdf(), signer, tsa);
}

/** `@signpdf` signer of a CAdES CMS with a signature-policy-identifier (CAdES-EPES, as ICP-Brasil asks). */
class PolicySigner extends Signer {
  constructor(
    private readonly signer: CmsSigner,
    private readonly policyOid: string,
  ) {
    super();
  }

  override async sign(pdfBuffer: Buffer): Promise<Buffer> {
    const policy = { oid: this.policyOid, hashAlgorithm: '2.16.840.1.101.3.4.2.1', hash: new Uint8Array(32) };
    return Buffer.from(
      await buildCadesSignature(new Uint8Array(pdfBuffer), this.signer, undefined, { policy }),
    );
  }
}

/** An ICP-Brasil-shaped signature: `/SubFilter /PBAD.PAdES` and a signature policy OID. */
export async function policySignedPdf(signer: CmsSigner, policyOid: string): Promise<Uint8Array> {
  const pdf = Buffer.from(await placeholderPdf('PBAD.PAdES'));
  return new Uint8Array(await new SignPdf().sign(pdf, new PolicySigner(signer, policyOid)));
}

/**
 * `pdf` with one incremental update appended (ISO 32000-1 7.5.6): a new Info dictionary, a cross-reference
 * table section for it and a trailer chained by /Prev. The bytes before it are unchanged.
 */
export function appendIncrementalUpdate(pdf: Uint8Array): Uint8Array {
  const text = Buffer.from(pdf).toString('latin1');
  const startxref = Number(/startxref\s+(\d+)\s+%%EOF\s*$/.exec(text)?.[1]);
  const trailer = text.slice(text.lastIndexOf('trailer'));
  const size = Number(/\/Size (\d+)/.exec(trailer)?.[1]);
  const root = /\/Root (\d+ \d+ R)/.exec(trailer)?.[1];
  if (!Number.isSafeInteger(startxref) || !Number.isSafeInteger(size) || !root) {
    throw new Error('appendIncrementalUpdate: no classic trailer');
  }
  const head = text.endsWith('\n') ? '' : '\n';
  const objectAt = pdf.length + head.length;
  const object = `${size} 0 obj\n<< /Producer (a later incremental update) >>\nendobj\n`;
  const xrefAt = objectAt + object.length;
  const update =
    `${head}${object}xref\n0 1\n0000000000 65535 f \n${size} 1\n${String(objectAt).padStart(10, '0')} 00000 n \n` +
    `trailer\n<< /Size ${size + 1} /Root ${root} /Info ${size} 0 R /Prev ${startxref} >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return new Uint8Array(Buffer.concat([Buffer.from(pdf), Buffer.from(update, 'latin1')]));
}

/**
 * `pdf` with one signed byte changed where no reader looks: the binary comment after the header
 * (ISO 32000-1 7.5.2), so the file still parses and only the signature's digest tells.
 */
export function tamperedPdf(pdf: Uint8Array): Uint8Array {
  const out = new Uint8Array(pdf);
  const comment = Buffer.from(pdf).indexOf('\n%', 0) + 2;
  if (comment < 2 || comment > 32) throw new Error('tamperedPdf: no binary comment after the header');
  out[comment] = (out[comment] ?? 0) ^ 0x01;
  return out;
}
