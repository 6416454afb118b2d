/**
 * What the service reports of an uploaded PDF's own signatures (`@notary/verify/original-signatures` through
 * the bounded worker of this adapter): the shared signed fixture, PDFs signed here with `signPdf` and the test
 * PKI (valid B-T, tampered after signing, an incremental update appended after signing, an ICP-Brasil-shaped
 * policy signature), each cross-checked with poppler's `pdfsig`; then every fixture PDF and the hostile ones
 * read without a crash, within the bounds.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { manyObjectsPdf, objectStreamBombPdf, xrefStreamBombPdf } from '@notary/pdf/hostile-pdfs.testing';
import { appendDocumentTimestamp, appendValidationData } from '@notary/pdf/ltv';
import { readPdfSignatures } from '@notary/verify/pdf-signatures';
import type { ReceiptOriginalSignature, ReceiptOriginalSignatures } from '@notary/verify/receipt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../../../../test/harness/fixtures';
import { createTestPki, type TestPki } from '../../../../test/harness/pki';
import {
  appendIncrementalUpdate,
  policySignedPdf,
  rsaSigner,
  signedPdf,
  tamperedPdf,
  tsaClient,
} from '../../../../test/harness/signed-pdfs';
import { startTestTsa, type TestTsa } from '../../../../test/harness/tsa';
import { BoundedOriginalSignatureReader } from './index';

const run = promisify(execFile);

let pki: TestPki;
let tsa: TestTsa;
let tmp: string;
let trusting: BoundedOriginalSignatureReader;
let plain: BoundedOriginalSignatureReader;

beforeAll(async () => {
  pki = await createTestPki();
  tsa = await startTestTsa(pki);
  tmp = await mkdtemp(path.join(os.tmpdir(), 'notary-originals-'));
  trusting = new BoundedOriginalSignatureReader([pki.otherRoot.certDer, pki.root.certDer]);
  plain = new BoundedOriginalSignatureReader([]);
});

afterAll(async () => {
  await tsa?.stop();
  await pki?.dispose();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** `pdfsig -nssdir sql:<nssDir>` stdout (non-zero exits still print). */
async function pdfsig(pdf: Uint8Array, name: string): Promise<string> {
  const file = path.join(tmp, name);
  await writeFile(file, pdf);
  const result = await run('pdfsig', ['-nssdir', `sql:${pki.nssDir}`, file]).catch(
    (e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }),
  );
  return result.stdout;
}

function only(read: ReceiptOriginalSignatures): ReceiptOriginalSignature {
  expect(read.status).toBe('read');
  if (read.status !== 'read') throw new Error('unreadable');
  expect(read.signatures).toHaveLength(1);
  return read.signatures[0] as ReceiptOriginalSignature;
}

describe('signatures of an uploaded PDF', () => {
  it('the shared signed fixture: signer, issuer, /M, adbe.pkcs7.detached, its irregular /ByteRange, digest and signature', async () => {
    const pdf = await readFile(path.join(FIXTURES_DIR, 'pdfs/signed_verified.pdf'));
    const sig = only(await plain.read(pdf, { at: new Date() }));
    const poppler = await pdfsig(pdf, 'fixture.pdf');
    expect(poppler).toContain('Signer full Distinguished Name: CN=test-pdf-signer');
    expect(sig).toMatchObject({
      index: 1,
      kind: 'signature',
      signer: 'CN=test-pdf-signer',
      issuer: 'CN=pdf-sign-ca',
      claimedTime: '2026-05-09T00:00:00.000Z',
      timestamp: null,
      filter: 'Adobe.PPKLite',
      subFilter: 'adbe.pkcs7.detached',
      policyOid: null,
      chain: { status: 'not-checked', anchor: null, message: 'not checked against a trust anchor' },
      revocation: { dss: false, vri: false, dssOcsps: 0, dssCrls: 0, inSignature: false },
    });
    // Its /ByteRange leaves out the hex digits only, not the < > delimiters (pdfsig: "Not total document
    // signed"); the SignerInfo digests with SHA-256 while the CMS names SHA-1 only (pdfsig: digest mismatch):
    // the messageDigest holds for the bytes it names, and the signature over the attributes verifies.
    expect(poppler).toContain('Not total document signed');
    expect(sig.coverage).toMatchObject({
      wellFormed: false,
      revision: 1,
      wholeOriginal: true,
      bytesAfter: 0,
    });
    expect(sig.integrity).toEqual({ digestAlgorithm: 'SHA-256', digest: true, signature: true });
  });

  it('a valid B-T signature: whole original, digest and signature, its timestamp, chained to the configured root', async () => {
    const pdf = await signedPdf(await rsaSigner(pki), tsaClient(pki, tsa));
    expect(await pdfsig(pdf, 'valid.pdf')).toContain('Signature Validation: Signature is Valid.');
    const sig = only(await trusting.read(pdf, { at: new Date() }));
    expect(sig.signer).toBe('O=Notary Test, CN=Notary Test Signer');
    expect(sig.issuer).toBe('O=Notary Test, CN=Notary Test Intermediate CA');
    expect(sig.timestamp?.tsa).toBe('O=Notary Test, CN=Notary Test TSA');
    expect(sig.subFilter).toBe('ETSI.CAdES.detached');
    expect(sig.coverage).toEqual({
      wellFormed: true,
      problem: null,
      revision: 1,
      wholeOriginal: true,
      bytesAfter: 0,
    });
    expect(sig.integrity).toEqual({ digestAlgorithm: 'SHA-256', digest: true, signature: true });
    expect(sig.timestamp).toMatchObject({ imprint: true, signature: true });
    expect(Math.abs(Date.parse(sig.timestamp?.genTime ?? '') - Date.now())).toBeLessThan(120_000);
    // The first anchor (another PKI's root) does not anchor it; the second does.
    expect(sig.chain).toMatchObject({ status: 'trusted', anchor: 'O=Notary Test, CN=Notary Test Root CA' });
    expect(sig.problem).toBeNull();
    // Without anchors: said so, not guessed.
    expect(only(await plain.read(pdf, { at: new Date() })).chain.status).toBe('not-checked');
  });

  it('a signature of another PKI chains to none of the anchors', async () => {
    const pdf = await signedPdf(await rsaSigner(pki));
    const other = new BoundedOriginalSignatureReader([pki.otherRoot.certDer]);
    const sig = only(await other.read(pdf, { at: new Date() }));
    expect(sig.chain.status).toBe('untrusted');
    expect(sig.integrity).toMatchObject({ digest: true, signature: true });
  });

  it('tampered after signing: the digest no longer matches (pdfsig agrees)', async () => {
    const pdf = tamperedPdf(await signedPdf(await rsaSigner(pki)));
    expect(await pdfsig(pdf, 'tampered.pdf')).toContain('Digest Mismatch');
    const sig = only(await plain.read(pdf, { at: new Date() }));
    expect(sig.integrity).toEqual({ digestAlgorithm: 'SHA-256', digest: false, signature: true });
    expect(sig.coverage.wholeOriginal).toBe(true);
  });

  it('two revisions: the signature covers the first, the update after it is counted (pdfsig: not total)', async () => {
    const signed = await signedPdf(await rsaSigner(pki));
    const pdf = appendIncrementalUpdate(signed);
    const file = path.join(tmp, 'two-revisions.pdf');
    await writeFile(file, pdf);
    await run('qpdf', ['--check', file]);
    expect(await pdfsig(pdf, 'two.pdf')).toContain('Not total document signed');
    const read = await plain.read(pdf, { at: new Date() });
    expect(read).toMatchObject({ status: 'read', revisions: 2 });
    const sig = only(read);
    expect(sig.coverage).toEqual({
      wellFormed: true,
      problem: null,
      revision: 1,
      wholeOriginal: false,
      bytesAfter: pdf.length - signed.length,
    });
    expect(sig.integrity).toMatchObject({ digest: true, signature: true });
  });

  it('validation data and a document timestamp after the signature: its /DSS and /VRI, the timestamp listed', async () => {
    const client = tsaClient(pki, tsa);
    const signed = await signedPdf(await rsaSigner(pki), client);
    const [first] = (await readPdfSignatures(signed)).signatures;
    if (!first) throw new Error('no signature');
    const material = { certs: [pki.intermediate.certDer, pki.rsa.certDer], ocsps: [], crls: [] };
    const withDss = await appendValidationData(signed, material, [
      { signatureContents: first.cms, ...material },
    ]);
    const { pdf } = await appendDocumentTimestamp(withDss, client);
    const poppler = await pdfsig(pdf, 'lta.pdf');
    expect(poppler.split(/Signature #\d+:/).slice(1)).toHaveLength(2);
    const read = await trusting.read(pdf, { at: new Date() });
    expect(read).toMatchObject({ status: 'read', revisions: 3 });
    if (read.status !== 'read') return;
    const [signature, stamp] = read.signatures;
    expect(signature).toMatchObject({
      kind: 'signature',
      coverage: {
        wellFormed: true,
        revision: 1,
        wholeOriginal: false,
        bytesAfter: pdf.length - signed.length,
      },
      integrity: { digest: true, signature: true },
      revocation: { dss: true, vri: true, dssOcsps: 0, dssCrls: 0, inSignature: false },
    });
    expect(stamp).toMatchObject({
      index: 2,
      kind: 'document-timestamp',
      subFilter: 'ETSI.RFC3161',
      signer: 'O=Notary Test, CN=Notary Test TSA',
      timestamp: { tsa: 'O=Notary Test, CN=Notary Test TSA', imprint: true, signature: true },
      coverage: { wellFormed: true, revision: 3, wholeOriginal: true, bytesAfter: 0 },
      integrity: { digest: true, signature: true },
      chain: { status: 'trusted' },
      revocation: { dss: true, vri: false },
      problem: null,
    });
  });

  it('a /Contents that is not a CMS is reported with its problem, not thrown', async () => {
    const signed = Buffer.from(await signedPdf(await rsaSigner(pki)));
    const at = signed.indexOf('/Contents <') + '/Contents <'.length;
    signed.write('FFFF', at, 'latin1');
    const sig = only(await plain.read(new Uint8Array(signed), { at: new Date() }));
    expect(sig.problem).toMatch(/the CMS does not read/);
    expect(sig).toMatchObject({ signer: null, integrity: { digest: null, signature: null } });
  });

  it('an ICP-Brasil-shaped signature: /SubFilter /PBAD.PAdES and its policy OID', async () => {
    const oid = '2.16.76.1.7.1.11.1.1';
    const pdf = await policySignedPdf(await rsaSigner(pki), oid);
    const sig = only(await plain.read(pdf, { at: new Date() }));
    expect(sig).toMatchObject({ subFilter: 'PBAD.PAdES', policyOid: oid, signingTime: null });
    expect(sig.integrity).toMatchObject({ digest: true, signature: true });
  });

  it('reads every fixture PDF and the hostile ones without a crash, within the bounds', async () => {
    const dir = path.join(FIXTURES_DIR, 'pdfs');
    const inputs: [string, Uint8Array][] = [];
    for (const name of (await readdir(dir)).sort()) inputs.push([name, await readFile(path.join(dir, name))]);
    inputs.push(['object stream bomb', await objectStreamBombPdf(100 * 1024 * 1024)]);
    inputs.push(['xref stream bomb', await xrefStreamBombPdf(100 * 1024 * 1024)]);
    inputs.push(['many objects', await manyObjectsPdf(200_000)]);
    for (const [name, pdf] of inputs) {
      const read = await plain.read(pdf, { at: new Date() });
      expect(['read', 'unreadable'], name).toContain(read.status);
      if (name === 'helloworld-bad.pdf' && read.status === 'read') expect(read.signatures).toEqual([]);
      // A bomb stops at the decoding bound: its signatures unreadable, or (pdf-lib recovering without the
      // cross-reference stream) none found.
      if (name.endsWith('bomb')) {
        if (read.status === 'unreadable') expect(read.reason, name).toMatch(/bound/);
        else expect(read.signatures, name).toEqual([]);
      }
      if (name === 'signed_verified.pdf') expect(read).toMatchObject({ status: 'read', signatures: [{}] });
    }
  });
});
