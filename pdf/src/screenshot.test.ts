import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { deflateSync } from 'node:zlib';
import { SCREENSHOT_MAX_PIXELS } from '@notary/shared/limits';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assemblePng, bandedPng, bombPng, hugeDeclaredPng, patternPng } from './hostile-pngs.testing';
import type { CertificateData } from './model';
import { checkScreenshotHeader, decodeScreenshot, screenshotDecodes } from './png';
import { renderCertificate } from './render';

/**
 * A web capture's screenshot on its certificate: the image XObject is there (poppler's pdfimages), the file is sound
 * (qpdf --check) and the caption is printed (pdftotext), separate and stamped layouts alike; a PNG that cannot be read
 * leaves the certificate without the image, saying so.
 * Its bounds: the samples survive every PNG row filter; a PNG declaring 100000 x 100000 pixels is refused from
 * its header, a decompression bomb at the declared size, both with a sound certificate saying where the
 * screenshot is; the largest screenshot a capture makes is decoded in the stamping worker, never on the
 * calling thread.
 */

const run = promisify(execFile);

const png = (width: number, height: number, alpha: boolean) => patternPng(width, height, alpha).png;

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

  it('a PNG that cannot be read: the certificate is issued without the image, and says where it is', async () => {
    const broken = png(64, 40, false).slice(0, 40);
    const out = await renderCertificate(webCapture(broken), null, { lang: 'en' });
    const { images, text } = await check(out.pdf, 'broken.pdf');
    expect(images).toEqual([]);
    expect(text).not.toContain('Screenshot of the page as captured');
    expect(text).toContain('The screenshot of the page could not be shown on this certificate');
    expect(text).toContain('It is in the registered WACZ archive');
    expect(text).toContain('Web capture of https://example.com/');
  });
});

/**
 * The samples of a binary PPM (P6) or PGM (P5) file as pdfimages writes them; `grey` keeps one sample of each
 * RGB triple (pdfimages writes a soft mask as a PPM whose three samples are equal).
 */
function netpbmSamples(file: Buffer, grey: boolean): { width: number; height: number; samples: Buffer } {
  const header = /^(P[56])\s+(\d+)\s+(\d+)\s+255\s/.exec(file.toString('latin1', 0, 64));
  if (!header) throw new Error('not a binary PPM/PGM');
  const samples = file.subarray(header[0].length);
  const keep = grey && header[1] === 'P6' ? samples.filter((_, i) => i % 3 === 0) : samples;
  return { width: Number(header[2]), height: Number(header[3]), samples: Buffer.from(keep) };
}

/** The images of `pdf` as pdfimages extracts them (decoded by poppler), in order; any after the first is a soft mask. */
async function extractImages(pdf: Uint8Array, name: string) {
  const out = await mkdtemp(path.join(dir, `${name}-`));
  const file = path.join(out, 'certificate.pdf');
  await writeFile(file, pdf);
  await run('pdfimages', [file, path.join(out, 'img')]);
  const names = (await readdir(out)).filter((n) => n.startsWith('img-')).sort();
  return Promise.all(names.map(async (n, i) => netpbmSamples(await readFile(path.join(out, n)), i > 0)));
}

describe('screenshot bounds', () => {
  it('the samples survive every PNG row filter (None, Sub, Up, Average, Paeth), colour and alpha', async () => {
    const rgb = patternPng(37, 23, false);
    const shown = await extractImages(
      (await renderCertificate(webCapture(rgb.png), null, { lang: 'en' })).pdf,
      'rgb',
    );
    expect(shown.map((i) => [i.width, i.height])).toEqual([[37, 23]]);
    expect(shown[0]?.samples.equals(rgb.samples)).toBe(true);

    const rgba = patternPng(37, 23, true);
    const [color, alpha] = await extractImages(
      (await renderCertificate(webCapture(rgba.png), null, { lang: 'en' })).pdf,
      'rgba',
    );
    const pixels = 37 * 23;
    const expectedColor = Buffer.alloc(pixels * 3);
    const expectedAlpha = Buffer.alloc(pixels);
    for (let p = 0; p < pixels; p += 1) {
      rgba.samples.copy(expectedColor, p * 3, p * 4, p * 4 + 3);
      expectedAlpha[p] = rgba.samples[p * 4 + 3] ?? 0;
    }
    expect(color?.samples.equals(expectedColor)).toBe(true);
    expect(alpha?.samples.equals(expectedAlpha)).toBe(true);
  });

  it('the header alone decides: over the cap, odd bit depth and colour type combinations, not a PNG', () => {
    const header = (width: number, height: number, bitDepth = 8, colorType = 2, interlace = 0) => {
      const png = hugeDeclaredPng(1, 1);
      png.writeUInt32BE(width, 16);
      png.writeUInt32BE(height, 20);
      png[24] = bitDepth;
      png[25] = colorType;
      png[28] = interlace;
      return checkScreenshotHeader(png, SCREENSHOT_MAX_PIXELS).kind;
    };
    // The largest screenshot a capture makes is the cap itself.
    expect(SCREENSHOT_MAX_PIXELS).toBe(1280 * 16384);
    expect(header(1280, 16384)).toBe('ok');
    expect(header(1280, 16385)).toBe('too-large');
    expect(header(100_000, 100_000)).toBe('too-large');
    expect(header(0xffffffff, 1)).toBe('unreadable');
    expect(header(0, 10)).toBe('unreadable');
    expect(header(64, 40, 8, 6)).toBe('ok');
    expect(header(64, 40, 8, 0)).toBe('ok');
    expect(header(64, 40, 8, 4)).toBe('ok');
    // Not allowed together by the PNG specification (Table 11.1).
    expect(header(64, 40, 16, 3)).toBe('unreadable');
    expect(header(64, 40, 4, 2)).toBe('unreadable');
    expect(header(64, 40, 8, 5)).toBe('unreadable');
    expect(header(64, 40, 8, 7)).toBe('unreadable');
    // Valid, but not what a capture makes: 16 bits a sample, indexed colour, interlaced.
    expect(header(64, 40, 16, 2)).toBe('unreadable');
    expect(header(64, 40, 8, 3)).toBe('unreadable');
    expect(header(64, 40, 8, 2, 1)).toBe('unreadable');
    expect(header(64, 40, 8, 2, 2)).toBe('unreadable');
    expect(
      checkScreenshotHeader(Buffer.from('GIF89a not a png at all, not at all'), SCREENSHOT_MAX_PIXELS).kind,
    ).toBe('unreadable');
  });

  it('a PNG declaring 100000 x 100000 pixels is refused before decoding', () => {
    const before = screenshotDecodes();
    expect(decodeScreenshot(hugeDeclaredPng(100_000, 100_000), SCREENSHOT_MAX_PIXELS)).toEqual({
      kind: 'too-large',
      width: 100_000,
      height: 100_000,
    });
    expect(screenshotDecodes()).toBe(before);
  });

  it('a decompression bomb stops at the bytes its declared size needs', async () => {
    // 1280 x 1024 RGB needs 3.9 MB; its data inflates to 256 MiB.
    const bomb = await bombPng(1280, 1024, 256 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const decoded = decodeScreenshot(bomb, SCREENSHOT_MAX_PIXELS);
    expect(decoded).toEqual({
      kind: 'unreadable',
      detail: `its image data inflates to more than the ${1024 * (1 + 1280 * 3)} bytes of 1280 x 1024 pixels`,
    });
    // Data that ends early, an unknown row filter type, corrupt data: refused too.
    const truncated = await bombPng(1280, 1024, 1000);
    expect(decodeScreenshot(truncated, SCREENSHOT_MAX_PIXELS)).toEqual({
      kind: 'unreadable',
      detail: `its image data ends after 1000 of ${1024 * (1 + 1280 * 3)} bytes`,
    });
    const rows = Buffer.alloc(2 * (1 + 4 * 3));
    rows[13] = 7;
    const badFilter = assemblePng({ width: 4, height: 2, bitDepth: 8, colorType: 2 }, deflateSync(rows));
    expect(decodeScreenshot(badFilter, SCREENSHOT_MAX_PIXELS)).toEqual({
      kind: 'unreadable',
      detail: 'unknown row filter type 7',
    });
    const corrupt = assemblePng(
      { width: 4, height: 2, bitDepth: 8, colorType: 2 },
      Buffer.from('not zlib data'),
    );
    expect(decodeScreenshot(corrupt, SCREENSHOT_MAX_PIXELS).kind).toBe('unreadable');
    expect(decodeScreenshot(patternPng(16, 16, false).png, SCREENSHOT_MAX_PIXELS).kind).toBe('image');
  });

  it.each([
    ['separate', false],
    ['stamped', true],
  ])(
    '%s layout: 100000 x 100000 pixels and a bomb give sound certificates without the image, saying why (en, pt)',
    async (name, stamped) => {
      const source = stamped ? await onePagePdf() : null;
      const before = screenshotDecodes();
      const huge = await renderCertificate(webCapture(hugeDeclaredPng(100_000, 100_000)), source, {
        lang: 'en',
      });
      expect(huge.layout).toBe(name);
      const hugeChecked = await check(huge.pdf, `huge-${name}.pdf`);
      expect(hugeChecked.images).toEqual([]);
      expect(hugeChecked.text).toContain(
        'The screenshot of the page (100000 × 100000 pixels) is too large to show on this certificate. It is in the registered WACZ archive, covered by the SHA-256 above: the integrity of the capture is not affected.',
      );
      expect(hugeChecked.text).toContain('Web capture of https://example.com/');

      const bomb = await bombPng(1280, 1024, 256 * 1024 * 1024);
      const refused = await renderCertificate(webCapture(bomb), source, { lang: 'pt' });
      expect(refused.layout).toBe(name);
      const bombChecked = await check(refused.pdf, `bomb-${name}.pdf`);
      expect(bombChecked.images).toEqual([]);
      expect(bombChecked.text).toContain(
        'A captura de tela da página não pôde ser mostrada neste certificado. Ela está no arquivo WACZ registrado',
      );
      // Neither reached a decoder on this thread.
      expect(screenshotDecodes()).toBe(before);
    },
    60_000,
  );

  it('the largest screenshot a capture makes (1280 x 16384) is decoded in the worker while this thread runs on', async () => {
    const shot = bandedPng(1280, 16384);
    const before = screenshotDecodes();
    // The event-loop probe: turns of this thread's loop while the certificate is rendered.
    let turns = 0;
    let probing = true;
    const probe = () => {
      turns += 1;
      if (probing) setImmediate(probe);
    };
    setImmediate(probe);
    const rendering = renderCertificate(webCapture(shot), null, { lang: 'en' });
    const out = await rendering.finally(() => {
      probing = false;
    });
    expect(turns).toBeGreaterThan(0);
    // The image is in the certificate, decoded and checked, and not by this thread.
    expect(screenshotDecodes()).toBe(before);
    const { images, text } = await check(out.pdf, 'largest.pdf');
    expect(images).toEqual([{ page: 1, type: 'image', width: 1280, height: 16384 }]);
    expect(text).toContain('Screenshot of the page as captured (top part');
  }, 60_000);
});

async function onePagePdf(): Promise<Uint8Array> {
  const source = await PDFDocument.create();
  source.addPage([300, 300]);
  return source.save();
}
