import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { DocumentDto } from '@notary/shared';
import { extractReceipt } from '@notary/verify';
import { parseReceipt, type Receipt } from '@notary/verify/receipt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../harness/fixtures';
import { api, uploadFile } from '../harness/http';
import { createTestPki, type TestPki } from '../harness/pki';
import { startTestService, type TestService } from '../harness/service';
import { appendIncrementalUpdate, rsaSigner, signedPdf, tsaClient } from '../harness/signed-pdfs';
import { startTestTsa, type TestTsa } from '../harness/tsa';

/**
 * Signatures an uploaded PDF already carries, through the real service: listed on its certificate (read back
 * with poppler's pdftotext) and carried in the receipt, the same in the certificate's `receipt.json` and at
 * `GET /api/documents/:id/receipt`; a PDF without signatures gets neither; the signed certificate keeps the
 * original's signature valid beside the service's (pdfsig).
 */

const exec = promisify(execFile);

let pki: TestPki;
let tsa: TestTsa;
let t: TestService;
let work: string;
let token: string;

async function upload(name: string, bytes: Uint8Array): Promise<DocumentDto> {
  const file = path.join(work, name);
  await writeFile(file, bytes);
  const res = await uploadFile(t.url, token, file);
  expect(res.status).toBe(201);
  return res.body as unknown as DocumentDto;
}

async function certificate(
  doc: DocumentDto,
  query = '',
): Promise<{ pdf: Uint8Array; text: string; file: string }> {
  const res = await fetch(`${t.url}/api/documents/${doc.id}/certificate?lang=pt${query}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  const pdf = new Uint8Array(await res.arrayBuffer());
  const file = path.join(work, `cert-${doc.id}${query.replace(/\W/g, '')}.pdf`);
  await writeFile(file, pdf);
  const { stdout } = await exec('pdftotext', ['-layout', file, '-']);
  return { pdf, text: stdout.replace(/\s+/g, ' '), file };
}

async function receipt(doc: DocumentDto): Promise<Receipt> {
  const res = await api<Receipt>(t.url, `/api/documents/${doc.id}/receipt`, { token });
  expect(res.status).toBe(200);
  return res.body;
}

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'notary-originals-e2e-'));
  pki = await createTestPki();
  tsa = await startTestTsa(pki);
  t = await startTestService('pglite', {
    SIGNING_CERT: pki.rsa.p12Path,
    SIGNING_CERT_PASSWORD: pki.p12Password,
    SIGNATURE_TRUST_CERTS: pki.root.certPath,
  });
  token = await t.token('originals@example.com');
});

afterAll(async () => {
  await t?.close();
  await tsa?.stop();
  await pki?.dispose();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('signatures already in an uploaded PDF', () => {
  it('are listed on the certificate and carried, the same, by both receipts', async () => {
    const doc = await upload('signed.pdf', await signedPdf(await rsaSigner(pki), tsaClient(pki, tsa)));
    const { pdf, text } = await certificate(doc);
    expect(text).toContain('ASSINATURAS NO DOCUMENTO ORIGINAL');
    expect(text).toContain('Assinatura 1 O=Notary Test, CN=Notary Test Signer');
    expect(text).toContain('Emissor do certificado O=Notary Test, CN=Notary Test Intermediate CA');
    expect(text).toContain('/ ETSI.CAdES.detached');
    expect(text).toContain('todo o documento original');
    expect(text).toContain('resumo (SHA-256) e assinatura conferem');
    expect(text).toContain('encadeia a O=Notary Test, CN=Notary Test Root CA');
    expect(text).toContain('por O=Notary Test, CN=Notary Test TSA (confere)');
    expect(text).toContain('sem DSS');

    const served = await receipt(doc);
    const attached = parseReceipt(new TextDecoder().decode((await extractReceipt(pdf)).bytes));
    expect(attached.originalSignatures).toEqual(served.originalSignatures);
    expect(served.originalSignatures).toMatchObject({
      status: 'read',
      revisions: 1,
      signatures: [
        {
          index: 1,
          kind: 'signature',
          signer: 'O=Notary Test, CN=Notary Test Signer',
          subFilter: 'ETSI.CAdES.detached',
          coverage: { wellFormed: true, wholeOriginal: true, bytesAfter: 0 },
          integrity: { digest: true, signature: true },
          timestamp: { imprint: true, signature: true, tsa: 'O=Notary Test, CN=Notary Test TSA' },
          chain: { status: 'trusted', anchor: 'O=Notary Test, CN=Notary Test Root CA' },
          revocation: { dss: false, vri: false },
          problem: null,
        },
      ],
    });
  });

  it('an update added after signing is stated, and the signed certificate keeps the original signature valid', async () => {
    const signed = await signedPdf(await rsaSigner(pki));
    const twice = appendIncrementalUpdate(signed);
    const doc = await upload('two-revisions.pdf', twice);
    const { text, file } = await certificate(doc, '&signed=1');
    expect(text).toContain(
      `uma revisão anterior: ${twice.length - signed.length} bytes foram acrescentados depois`,
    );
    const { stdout } = await exec('pdfsig', ['-nssdir', `sql:${pki.nssDir}`, file]);
    const parts = stdout.split(/Signature #\d+:/).slice(1);
    expect(parts).toHaveLength(2);
    expect(parts[0]).toContain('Signature Validation: Signature is Valid.');
    expect(parts[1]).toContain('Signature Validation: Signature is Valid.');
    expect((await receipt(doc)).originalSignatures).toMatchObject({
      status: 'read',
      revisions: 2,
      signatures: [{ coverage: { wholeOriginal: false, bytesAfter: twice.length - signed.length } }],
    });
  });

  it('a PDF without signatures, and a damaged one, get neither the section nor the receipt field', async () => {
    for (const name of ['hello_world_rotated.pdf', 'helloworld-bad.pdf']) {
      const res = await uploadFile(t.url, token, path.join(FIXTURES_DIR, 'pdfs', name));
      const doc = res.body as unknown as DocumentDto;
      const { text } = await certificate(doc);
      expect(text, name).not.toContain('ASSINATURAS NO DOCUMENTO ORIGINAL');
      expect(await receipt(doc), name).not.toHaveProperty('originalSignatures');
    }
  });
});
