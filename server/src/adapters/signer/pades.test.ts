/**
 * PAdES signing end to end: a pdf-lib PDF with an `ETSI.CAdES.detached` placeholder, signed by `signPdf` with
 * the test PKI (`test/harness/pki.ts`), checked by poppler's `pdfsig` (NSS, trusting only the test root) and
 * by reading the CMS back: ESS signingCertificateV2, no signingTime, and for B-T the signature timestamp from
 * the loopback TSA (`test/harness/tsa.ts`).
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { OID } from '@notary/pdf/cades';
import { PADES_MAX_CMS_BYTES, PADES_SIGNATURE_LENGTH, signPdf } from '@notary/pdf/pades';
import { sha256HexSync } from '@notary/platform/sha256';
import { asn1js, pkijs } from '@notary/trust/asn1';
import { essCertIdMatches, parseSignedData, readEssCertIds, signerCertificate } from '@notary/trust/cms';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { placeholderPdf as onePagePlaceholderPdf } from '../../../../test/harness/pades-pdfs';
import { createTestPki, type TestPki } from '../../../../test/harness/pki';
import { startTestTsa, type TestTsa } from '../../../../test/harness/tsa';
import type { DocumentSigner } from '../../ports/signer';
import { HttpTimestampAuthority } from '../tsa/http';
import { loadFileSigner } from './file';

const run = promisify(execFile);

let pki: TestPki;
let tsaServer: TestTsa;
let tmp: string;
let rsaSigner: DocumentSigner;
let ecSigner: DocumentSigner;

beforeAll(async () => {
  pki = await createTestPki();
  tsaServer = await startTestTsa(pki);
  tmp = await mkdtemp(path.join(os.tmpdir(), 'notary-pades-test-'));
  rsaSigner = await loadFileSigner({ pkcs12: pki.rsa.p12, password: pki.p12Password });
  ecSigner = await loadFileSigner({ keyPem: pki.ec.keyPem, chainPem: pki.ec.chainPem });
});

afterAll(async () => {
  await tsaServer?.stop();
  await pki?.dispose();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** The certificate-like one-page PDF with a placeholder of `signatureLength` bytes these tests sign. */
function placeholderPdf(signatureLength = PADES_SIGNATURE_LENGTH): Promise<Uint8Array> {
  return onePagePlaceholderPdf({
    signatureLength,
    title: 'Notary Test Document',
    note: 'SHA-256 0000000000000000000000000000000000000000000000000000000000000000',
  });
}

/** `pdfsig -nssdir sql:<nssDir> <pdf>` stdout (pdfsig may exit non-zero on a bad signature; stdout still counts). */
async function pdfsig(pdf: Uint8Array, name: string, nssDir = pki.nssDir): Promise<string> {
  const file = path.join(tmp, name);
  await writeFile(file, pdf);
  const result = await run('pdfsig', ['-nssdir', `sql:${nssDir}`, file]).catch(
    (e: { stdout?: string; stderr?: string }) => ({ stdout: e.stdout ?? '', stderr: e.stderr ?? '' }),
  );
  return result.stdout;
}

/** `/ByteRange` numbers and the CMS of `/Contents` (its DER length, without the zero padding). */
function readSignature(pdf: Uint8Array): { byteRange: number[]; cms: Uint8Array; signedBytes: Uint8Array } {
  const buf = Buffer.from(pdf);
  const m = /\/ByteRange \[(\d+) (\d+) (\d+) (\d+) *\]/.exec(buf.toString('latin1'));
  if (!m) throw new Error('no ByteRange');
  const byteRange = m.slice(1, 5).map(Number);
  const [a = 0, b = 0, c = 0, d = 0] = byteRange;
  const hex = buf.subarray(a + b + 1, c - 1).toString('latin1');
  const padded = new Uint8Array(Buffer.from(hex, 'hex'));
  const parsed = asn1js.fromBER(padded);
  expect(parsed.offset).toBeGreaterThan(0);
  const signedBytes = new Uint8Array(Buffer.concat([buf.subarray(a, a + b), buf.subarray(c, c + d)]));
  return { byteRange, cms: padded.subarray(0, parsed.offset), signedBytes };
}

/** What every valid signature of ours must show, per pdfsig (poppler 22.12 wording) and per the CMS itself. */
async function expectValidPades(
  pdf: Uint8Array,
  name: string,
  signer: DocumentSigner,
  signerCertDer: Uint8Array,
) {
  const out = await pdfsig(pdf, name);
  expect(out).toContain('Signature Type: ETSI.CAdES.detached');
  expect(out).toContain('Signing Hash Algorithm: SHA-256');
  expect(out).toContain('Signer Certificate Common Name: Notary Test Signer');
  expect(out).toContain('Total document signed');
  expect(out).toContain('Signature Validation: Signature is Valid.');
  expect(out).toContain('Certificate Validation: Certificate is Trusted.');

  const { cms, signedBytes } = readSignature(pdf);
  expect(cms.byteLength).toBeLessThanOrEqual(PADES_MAX_CMS_BYTES);
  const parsed = parseSignedData(cms, 'CMS');
  const { signedData, signerInfo } = parsed;
  expect(signedData.encapContentInfo.eContentType).toBe(OID.data);
  expect(signedData.encapContentInfo.eContent).toBeUndefined();
  expect(signedData.certificates).toHaveLength(signer.certificateChain.length);
  expect(signerInfo.sid).toBeInstanceOf(pkijs.IssuerAndSerialNumber);
  expect(signerInfo.digestAlgorithm.algorithmId).toBe(OID.sha256);
  expect(signerInfo.signatureAlgorithm.algorithmId).toBe(
    signer.algorithm === 'RSASSA-PKCS1-v1_5-SHA256' ? OID.sha256WithRSAEncryption : OID.ecdsaWithSHA256,
  );

  // Signed attributes: exactly contentType, messageDigest, signingCertificateV2; never signingTime.
  const attrs = signerInfo.signedAttrs?.attributes ?? [];
  expect(attrs.map((a) => a.type).sort()).toEqual(
    [OID.contentType, OID.messageDigest, OID.signingCertificateV2].sort(),
  );
  expect(attrs.some((a) => a.type === OID.signingTime)).toBe(false);
  const messageDigest = attrs.find((a) => a.type === OID.messageDigest)?.values[0] as asn1js.OctetString;
  expect(Buffer.from(messageDigest.valueBlock.valueHexView).toString('hex')).toBe(sha256HexSync(signedBytes));

  // ESS signingCertificateV2 = SHA-256 of the signer certificate, default algorithm left out, issuerSerial right.
  const essAttr = attrs.find((a) => a.type === OID.signingCertificateV2) as pkijs.Attribute;
  const [first] = readEssCertIds(essAttr);
  const signerCert = signerCertificate(parsed);
  if (!first || !signerCert) throw new Error('no ESSCertIDv2 or no signer certificate');
  expect(Buffer.from(first.certHash).toString('hex')).toBe(sha256HexSync(signerCertDer));
  expect(first.hashAlgorithm).toBe(OID.sha256);
  expect((await essCertIdMatches(first, signerCert)).issuerSerial).toBe(true);
  const essCertIdV2 = (essAttr.values[0] as asn1js.Sequence).valueBlock.value[0] as asn1js.Sequence;
  const firstField = (essCertIdV2.valueBlock.value[0] as asn1js.Sequence).valueBlock.value[0];
  expect(firstField).toBeInstanceOf(asn1js.OctetString);
  const rogue = pkijs.Certificate.fromBER(new Uint8Array(pki.rogueTsa.certDer));
  expect((await essCertIdMatches(first, rogue)).hash).toBe(false);
  return { out, cms, signerInfo };
}

describe('signPdf (PAdES)', () => {
  it('B-B with the RSA PKCS#12 signer: pdfsig finds it valid and trusted', async () => {
    const pdf = await placeholderPdf();
    const signed = await signPdf(pdf, rsaSigner);
    expect(signed.byteLength).toBe(pdf.byteLength);
    const { cms, signerInfo } = await expectValidPades(signed, 'rsa.pdf', rsaSigner, pki.rsa.certDer);
    expect(signerInfo.unsignedAttrs).toBeUndefined();
    expect(cms.byteLength).toBeLessThan(5000);

    // Trust comes from the NSS database: an empty one does not trust the root.
    const emptyNss = path.join(tmp, 'empty-nss');
    await mkdir(emptyNss, { recursive: true });
    await run('certutil', ['-N', '--empty-password', '-d', `sql:${emptyNss}`]);
    const untrusted = await pdfsig(signed, 'rsa-untrusted.pdf', emptyNss);
    expect(untrusted).toContain('Signature Validation: Signature is Valid.');
    expect(untrusted).not.toContain('Certificate is Trusted.');
  });

  it('B-B with the EC P-256 PEM signer: pdfsig finds it valid and trusted', async () => {
    const signed = await signPdf(await placeholderPdf(), ecSigner);
    await expectValidPades(signed, 'ec.pdf', ecSigner, pki.ec.certDer);
  });

  it('B-T with the RSA signer and the TSA: signature timestamp over the signature value', async () => {
    const requests = tsaServer.requests;
    const tsa = new HttpTimestampAuthority({ url: tsaServer.url, trustedCertificates: [pki.root.certDer] });
    const signed = await signPdf(await placeholderPdf(), rsaSigner, tsa);
    expect(tsaServer.requests).toBe(requests + 1);
    const { cms, signerInfo } = await expectValidPades(signed, 'rsa-t.pdf', rsaSigner, pki.rsa.certDer);
    expect(cms.byteLength).toBeLessThan(PADES_MAX_CMS_BYTES / 2);

    const unsigned = signerInfo.unsignedAttrs?.attributes ?? [];
    expect(unsigned.map((a) => a.type)).toEqual([OID.signatureTimeStampToken]);
    const token = new pkijs.ContentInfo({ schema: unsigned[0]?.values[0] });
    const tokenSignedData = new pkijs.SignedData({ schema: token.content });
    expect(tokenSignedData.encapContentInfo.eContentType).toBe(OID.tstInfo);
    const tst = pkijs.TSTInfo.fromBER(
      tokenSignedData.encapContentInfo.eContent?.getValue() ?? new ArrayBuffer(0),
    );
    const signatureValue = signerInfo.signature.valueBlock.valueHexView;
    expect(tst.messageImprint.hashAlgorithm.algorithmId).toBe(OID.sha256);
    expect(Buffer.from(tst.messageImprint.hashedMessage.valueBlock.valueHexView).toString('hex')).toBe(
      sha256HexSync(signatureValue),
    );

    // A third party agrees: openssl verifies the embedded token against SHA-256 of the signature value.
    const tokenFile = path.join(tmp, 'token.der');
    await writeFile(tokenFile, new Uint8Array(token.toSchema().toBER(false)));
    const caFile = path.join(tmp, 'pades-ca.pem');
    await writeFile(caFile, pki.caChainPem);
    const { stdout } = await run('openssl', [
      'ts',
      '-verify',
      '-token_in',
      '-in',
      tokenFile,
      '-digest',
      sha256HexSync(signatureValue),
      '-CAfile',
      caFile,
    ]);
    expect(stdout).toContain('Verification: OK');
  });

  it('a byte changed in the page content breaks the signature', async () => {
    const signed = await signPdf(await placeholderPdf(), rsaSigner);
    const text = Buffer.from(signed).toString('latin1');
    const contentsRef = /\/Contents \[ (\d+) 0 R \]/.exec(text);
    expect(contentsRef).not.toBeNull();
    const objectAt = text.indexOf(`\n${contentsRef?.[1]} 0 obj`);
    const streamAt = text.indexOf('stream\n', objectAt) + 'stream\n'.length;
    const { byteRange } = readSignature(signed);
    expect(objectAt).toBeGreaterThan(0);
    expect(streamAt + 10).toBeLessThan(byteRange[1] ?? 0); // inside the first signed range

    const tampered = new Uint8Array(signed);
    tampered[streamAt + 10] = (tampered[streamAt + 10] ?? 0) ^ 0xff;
    const out = await pdfsig(tampered, 'tampered.pdf');
    expect(out).not.toContain('Signature is Valid.');
    expect(out).toContain('Digest Mismatch');
  });

  it('refuses a CMS that does not fit the placeholder, naming the sizes', async () => {
    await expect(signPdf(await placeholderPdf(2000), rsaSigner)).rejects.toThrow(/placeholder holds 1000/);
  });

  it('refuses a PDF without a placeholder', async () => {
    const doc = await PDFDocument.create();
    doc.addPage();
    await expect(signPdf(await doc.save(), rsaSigner)).rejects.toThrow(/no signature placeholder/);
  });
});
