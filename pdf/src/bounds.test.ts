import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { deflateSync } from 'node:zlib';
import { PDFContext, PDFName, PDFRawStream } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBounded, inflateBounded } from './bounded-decode';
import { PDF_MAX_STREAM_DECODED_BYTES, PdfBoundError } from './bounds';
import {
  deflatePrefixAndZeros,
  manyObjectsPdf,
  objectStreamBombPdf,
  xrefStreamBombPdf,
} from './hostile-pdfs.testing';
import type { CertificateData } from './model';
import { renderCertificate } from './render';

/**
 * The bounds of processing an untrusted PDF: bounded stream decoding, and certificates of hostile PDFs (Flate bombs in
 * an object stream or the cross-reference stream, an object flood past the heap bound) issued as separate PDFs with the
 * bound as reason. Outputs checked with qpdf.
 */

const run = promisify(execFile);
const MIB = 1024 * 1024;

function data(): CertificateData {
  return {
    serviceName: 'Notary',
    serviceUrl: 'https://notary.example.com',
    verifyUrl: 'https://notary.example.com/api/public/documents/2026-000124',
    document: {
      id: '6f1c2b7e-2d7a-4a51-9d1e-0b9c4c1f7a22',
      serialNumber: '2026-000124',
      fileName: 'bomb.pdf',
      fileSize: 2 * MIB,
      mimeType: 'application/pdf',
      sha256Hash: 'ab'.repeat(32),
      createdAt: new Date('2026-11-21T09:14:03Z'),
      tenantName: 'Acme Ltda.',
    },
    consent: { given: true, timestamp: new Date('2026-11-21T09:13:58Z') },
    merkle: null,
    evm: null,
    stacks: null,
    issuedAt: new Date('2026-11-21T09:30:00Z'),
    signed: false,
  };
}

let workDir = '';
beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'certificate-bounds-'));
});
afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

/** `qpdf --check` of `pdf` saved as `name`: exit 0 only. */
async function qpdfCheck(name: string, pdf: Uint8Array): Promise<void> {
  const file = path.join(workDir, name);
  await writeFile(file, pdf);
  await run('qpdf', ['--check', file]);
}

describe('bounded decoding', () => {
  it('inflates up to the bound and refuses a Flate bomb past it', async () => {
    const small = deflateSync(Buffer.from('1 0 0 2 0 4'));
    expect(Buffer.from(inflateBounded(small, 100)).toString()).toBe('1 0 0 2 0 4');
    const bomb = await deflatePrefixAndZeros(new Uint8Array(0), 2 * PDF_MAX_STREAM_DECODED_BYTES);
    expect(bomb.length).toBeLessThan(MIB);
    expect(() => inflateBounded(bomb, PDF_MAX_STREAM_DECODED_BYTES)).toThrow(PdfBoundError);
    expect(() => inflateBounded(small, 4)).toThrow(/more than 4 bytes/);
  });

  it("decodes through pdf-lib's filters up to the bound", async () => {
    const context = PDFContext.create();
    const stream = (contents: Uint8Array, filter: string) =>
      PDFRawStream.of(context.obj({ Filter: PDFName.of(filter) }), contents);
    const hex = stream(Buffer.from('48656c6c6f>'), 'ASCIIHexDecode');
    expect(Buffer.from(decodeBounded(hex, 5)).toString()).toBe('Hello');
    expect(() => decodeBounded(hex, 4)).toThrow(PdfBoundError);
    const bomb = stream(await deflatePrefixAndZeros(new Uint8Array(0), 8 * MIB), 'FlateDecode');
    expect(() => decodeBounded(bomb, MIB)).toThrow(/decodes to more than 1048576 bytes/);
  });
});

describe('certificates of hostile PDFs', () => {
  it.each([
    ['object stream', () => objectStreamBombPdf(1024)],
    ['cross-reference stream', () => xrefStreamBombPdf(0)],
    ['many objects', () => manyObjectsPdf(1000)],
  ])('the small %s fixture is a valid PDF and is stamped', async (name, make) => {
    const source = await make();
    await qpdfCheck(`${name}-source.pdf`, source);
    const rendered = await renderCertificate(data(), source, { lang: 'pt' });
    expect(rendered.layout, rendered.fallbackReason).toBe('stamped');
    expect(Buffer.from(rendered.pdf.subarray(0, source.length)).equals(Buffer.from(source))).toBe(true);
    await qpdfCheck(`${name}-stamped.pdf`, rendered.pdf);
  });

  it.each([
    ['object stream', () => objectStreamBombPdf(4 * PDF_MAX_STREAM_DECODED_BYTES), /decodes to more than/],
    ['cross-reference stream', () => xrefStreamBombPdf(4 * PDF_MAX_STREAM_DECODED_BYTES), /inflates to more/],
  ])('a Flate bomb in the %s gets a separate certificate', async (name, make, reason) => {
    const source = await make();
    expect(source.length).toBeLessThan(MIB);
    const rendered = await renderCertificate(data(), source, { lang: 'pt' });
    expect(rendered.layout).toBe('separate');
    expect(rendered.fallbackReason).toMatch(/^PDF exceeds a processing bound: /);
    expect(rendered.fallbackReason).toMatch(reason);
    await qpdfCheck(`${name}-bomb-certificate.pdf`, rendered.pdf);
  });

  it('a PDF whose objects need more than the heap bound gets a separate certificate', async () => {
    // About 12 MB decoded (under the stream bounds) but several hundred MB of pdf-lib objects: the heap
    // bound stops it (or, on a very slow machine, the deadline: a bound either way).
    const source = await manyObjectsPdf(400_000);
    const rendered = await renderCertificate(data(), source, { lang: 'en' });
    expect(rendered.layout).toBe('separate');
    expect(rendered.fallbackReason).toMatch(/^PDF exceeds a processing bound: .*(heap|deadline)/);
    await qpdfCheck('heap-certificate.pdf', rendered.pdf);
  }, 120_000);

  it('stops at once when the signal aborts, with its reason', async () => {
    const source = new Uint8Array(
      await readFile(path.resolve(import.meta.dirname, '../../../shared/fixtures/pdfs/tracemonkey.pdf')),
    );
    const controller = new AbortController();
    const rendering = renderCertificate(data(), source, { lang: 'pt', signal: controller.signal });
    const reason = new Error('client left');
    controller.abort(reason);
    await expect(rendering).rejects.toBe(reason);
  });
});
