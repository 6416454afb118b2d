import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachFile, type PdfAttachment } from './attachment';
import type { CertificateData } from './model';
import { renderCertificate } from './render';

/** Associated files, how every certificate carries its `receipt.json`, checked with poppler's pdfdetach and qpdf. */

const run = promisify(execFile);
const FIXTURES = path.resolve(import.meta.dirname, '../../../shared/fixtures/pdfs');

const data: CertificateData = {
  serviceName: 'Notary',
  serviceUrl: 'https://notary.example.com',
  verifyUrl: 'https://notary.example.com/api/public/documents/T-1',
  document: {
    id: '6f1c2b7e-2d7a-4a51-9d1e-0b9c4c1f7a21',
    serialNumber: 'T-1',
    fileName: 'attachment.pdf',
    fileSize: 1,
    mimeType: 'application/pdf',
    sha256Hash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    createdAt: new Date('2026-11-21T09:14:03Z'),
    tenantName: 'Acme',
  },
  consent: { given: true, timestamp: new Date('2026-11-21T09:13:58Z') },
  merkle: null,
  evm: null,
  stacks: null,
  issuedAt: new Date('2026-11-21T09:30:00Z'),
  signed: false,
};

const receipt = (text: string): PdfAttachment => ({
  name: 'receipt.json',
  bytes: new TextEncoder().encode(text),
  mimeType: 'application/json',
  description: 'Notarization receipt',
  relationship: 'Supplement',
  modified: new Date('2026-11-21T09:30:00Z'),
});

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'attachment-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** pdfdetach's list, and the bytes of the attachment it lists as `name`. */
async function detach(pdf: Uint8Array, name: string): Promise<{ list: string; bytes: Buffer }> {
  const file = path.join(dir, `${Math.random().toString(36).slice(2)}.pdf`);
  await writeFile(file, pdf);
  const list = (await run('pdfdetach', ['-list', file])).stdout;
  const n = new RegExp(`^(\\d+): ${name.replace('.', '\\.')}$`, 'm').exec(list)?.[1] ?? '0';
  const out = `${file}.out`;
  await run('pdfdetach', ['-save', n, '-o', out, file]);
  await run('qpdf', ['--check', file]);
  return { list, bytes: await readFile(out) };
}

describe('associated files', () => {
  it('a separate certificate lists receipt.json in /EmbeddedFiles and /AF, AFRelationship Supplement', async () => {
    const { pdf } = await renderCertificate(data, null, { lang: 'en', attachments: [receipt('{"a":1}\n')] });
    const { list, bytes } = await detach(pdf, 'receipt.json');
    expect(list).toBe('1 embedded files\n1: receipt.json\n');
    expect(bytes.toString()).toBe('{"a":1}\n');
    const doc = await PDFDocument.load(pdf);
    expect(doc.catalog.toString()).toMatch(/\/AF \[ \d+ 0 R \]/);
    const text = Buffer.from(pdf).toString('latin1');
    expect(text).toContain('/AFRelationship /Supplement');
    expect(text).toContain('/Subtype /application#2Fjson');
  });

  it("a stamped PDF keeps the original's own attachment and its bytes as prefix", async () => {
    const original = new Uint8Array(await readFile(path.join(FIXTURES, 'attachment.pdf')));
    const rendered = await renderCertificate(data, original, {
      lang: 'en',
      attachments: [receipt('{"b":2}\n')],
    });
    expect(rendered.layout).toBe('stamped');
    expect(Buffer.from(rendered.pdf.subarray(0, original.length)).equals(Buffer.from(original))).toBe(true);
    const { list, bytes } = await detach(rendered.pdf, 'receipt.json');
    expect(list).toBe('2 embedded files\n1: foo.txt\n2: receipt.json\n');
    expect(bytes.toString()).toBe('{"b":2}\n');
    expect((await detach(rendered.pdf, 'foo.txt')).bytes.toString()).toBe('bar baz \n');
  });

  it('attaching a name again replaces its name tree entry (one receipt.json)', async () => {
    const doc = await PDFDocument.create();
    doc.addPage();
    attachFile(doc, receipt('old'));
    attachFile(doc, receipt('new'));
    const { list, bytes } = await detach(await doc.save(), 'receipt.json');
    expect(list).toBe('1 embedded files\n1: receipt.json\n');
    expect(bytes.toString()).toBe('new');
  });
});
