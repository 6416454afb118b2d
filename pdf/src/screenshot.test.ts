import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { crc32, deflateSync } from 'node:zlib';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CertificateData } from './model';
import { renderCertificate } from './render';

/**
 * A web capture's screenshot on its certificate (issue 15): the image XObject is there (poppler's
 * pdfimages), the file is sound (qpdf --check) and the caption is printed (pdftotext), separate and
 * stamped layouts alike; a PNG pdf-lib cannot read leaves the certificate without the image.
 */

const run = promisify(execFile);

/** A PNG (ISO/IEC 15948) of `width` x `height` pixels, 8-bit RGB or RGBA, every row filter 0 (None). */
function png(width: number, height: number, alpha: boolean): Uint8Array {
  const channels = alpha ? 4 : 3;
  const raw = Buffer.alloc((width * channels + 1) * height);
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const at = y * (width * channels + 1) + 1 + x * channels;
      raw[at] = y < height / 2 ? 220 : 20;
      raw[at + 1] = 40;
      raw[at + 2] = y < height / 2 ? 20 : 220;
      if (alpha) raw[at + 3] = x < width / 2 ? 255 : 128;
    }
  }
  const chunk = (type: string, data: Buffer): Buffer => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = alpha ? 6 : 2;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function webCapture(screenshot: Uint8Array): CertificateData {
  return {
    serviceName: 'Notary',
    serviceUrl: 'https://notary.example.com',
    verifyUrl: 'https://notary.example.com/api/public/documents/2026-000200',
    document: {
      id: '0b7e1c2a-5d3f-4e61-8a9b-2c4d6e8f0a1b',
      serialNumber: '2026-000200',
      fileName: 'capture.wacz',
      fileSize: 98_765,
      mimeType: 'application/wacz+zip',
      sha256Hash: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      createdAt: new Date('2026-11-21T09:14:03Z'),
      tenantName: 'Acme Ltda.',
    },
    consent: { given: true, timestamp: new Date('2026-11-21T09:13:58Z') },
    merkle: null,
    evm: null,
    stacks: null,
    issuedAt: new Date('2026-11-21T09:30:00Z'),
    signed: false,
    notes: ['Web capture of https://example.com/, final URL https://example.com/ (HTTP 200).'],
    screenshot,
  };
}

let dir = '';
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'certificate-screenshot-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Checked {
  /** `pdfimages -list` rows: page, type (image/smask), width, height. */
  images: { page: number; type: string; width: number; height: number }[];
  text: string;
}

/** Writes `pdf`, requires `qpdf --check` to pass, and returns its images and text. */
async function check(pdf: Uint8Array, name: string): Promise<Checked> {
  const file = path.join(dir, name);
  await writeFile(file, pdf);
  const qpdf = await run('qpdf', ['--check', file]);
  expect(qpdf.stdout).toContain('No syntax or stream encoding errors found');
  const list = await run('pdfimages', ['-list', file]);
  const images = list.stdout
    .split('\n')
    .slice(2)
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const cols = line.trim().split(/\s+/);
      return { page: Number(cols[0]), type: cols[2] ?? '', width: Number(cols[3]), height: Number(cols[4]) };
    });
  const text = (await run('pdftotext', [file, '-'])).stdout.replace(/\s+/g, ' ');
  return { images, text };
}

describe('screenshot on a web capture certificate', () => {
  it('separate layout: the PNG is an image XObject on the first page, captioned (en)', async () => {
    const out = await renderCertificate(webCapture(png(64, 40, false)), null, { lang: 'en' });
    expect(out.layout).toBe('separate');
    const { images, text } = await check(out.pdf, 'small.pdf');
    expect(images).toEqual([{ page: 1, type: 'image', width: 64, height: 40 }]);
    expect(text).toContain('Screenshot of the page as captured');
    expect(text).not.toContain('top part');
  });

  it('a full-page screenshot shows its top part, and the caption says so (pt); alpha becomes a soft mask', async () => {
    const out = await renderCertificate(webCapture(png(20, 400, true)), null, { lang: 'pt' });
    const { images, text } = await check(out.pdf, 'tall.pdf');
    expect(images).toEqual([
      { page: 1, type: 'image', width: 20, height: 400 },
      { page: 1, type: 'smask', width: 20, height: 400 },
    ]);
    expect(text).toContain('Captura de tela da página (parte superior');
  });

  it('stamped layout: the image is on the appended certificate page', async () => {
    const source = await PDFDocument.create();
    source.addPage([300, 300]);
    const bytes = await source.save();
    const out = await renderCertificate(webCapture(png(64, 40, false)), bytes, { lang: 'en' });
    expect(out.layout).toBe('stamped');
    const { images, text } = await check(out.pdf, 'stamped.pdf');
    expect(images).toEqual([{ page: 2, type: 'image', width: 64, height: 40 }]);
    expect(text).toContain('Screenshot of the page as captured');
  });

  it('a PNG pdf-lib cannot read: the certificate is issued without the image', async () => {
    const broken = png(64, 40, false).slice(0, 40);
    const out = await renderCertificate(webCapture(broken), null, { lang: 'en' });
    const { images, text } = await check(out.pdf, 'broken.pdf');
    expect(images).toEqual([]);
    expect(text).not.toContain('Screenshot of the page');
    expect(text).toContain('Web capture of https://example.com/');
  });
});
