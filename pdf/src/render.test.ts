import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { inflateSync } from 'node:zlib';
import { Signer, SignPdf } from '@signpdf/signpdf';
import { degrees, PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CertificateData } from './model';
import { type RenderedCertificate, type RenderOptions, renderCertificate } from './render';

/**
 * The certificate renderer checked with third-party tools: qpdf (structure), poppler (pdftoppm rendering,
 * pdftotext, pdfinfo, pdfsig signatures), zbarimg (QR decoding) and openssl (a real CMS signature).
 */

const REPO_ROOT = path.resolve(import.meta.dirname, '../..');
const FIXTURES = path.resolve(REPO_ROOT, '../shared/fixtures');

const run = promisify(execFile);

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a tool; a non-zero exit is a result, not an exception (qpdf exits 3 for warnings). */
async function tool(cmd: string, args: string[]): Promise<Result> {
  try {
    const { stdout, stderr } = await run(cmd, args, { maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number | string; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw error;
    return { code: e.code, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** At most `n` of the heavy per-fixture jobs at once (2-core CI machines). */
function limiter(n: number): <T>(job: () => Promise<T>) => Promise<T> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (job) => {
    if (active >= n) await new Promise<void>((resolve) => waiting.push(resolve));
    active += 1;
    try {
      return await job();
    } finally {
      active -= 1;
      waiting.shift()?.();
    }
  };
}
const limit = limiter(4);

const HASH = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
const ROOT = '9f2c7e4b1a0d3c5e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e';
const ATTESTATION_UID = `0x${'4a'.repeat(32)}`;
const ATTESTATION_URL = `https://base-sepolia.easscan.org/attestation/view/${ATTESTATION_UID}`;
const VERIFY_URL = 'https://notary.example.com/api/public/documents/2026-000123';

interface SampleOptions {
  fileName?: string;
  mimeType?: string;
  /** EVM anchor not included yet (no attestation: the QR points at the verify URL). */
  evmPending?: boolean;
  signed?: boolean;
}

/** A certificate with both chains configured: EVM registered (unless `evmPending`), Stacks pending. */
function sampleData(options: SampleOptions = {}): CertificateData {
  const evmPending = options.evmPending ?? false;
  const txHash = `0x${'5e'.repeat(32)}`;
  return {
    serviceName: 'Notary',
    serviceUrl: 'https://notary.example.com',
    verifyUrl: VERIFY_URL,
    document: {
      id: '6f1c2b7e-2d7a-4a51-9d1e-0b9c4c1f7a21',
      serialNumber: '2026-000123',
      fileName: options.fileName ?? 'Relatório_ação_2026.pdf',
      fileSize: 123_456,
      mimeType: options.mimeType ?? 'application/pdf',
      sha256Hash: HASH,
      createdAt: new Date('2026-11-21T09:14:03Z'),
      tenantName: 'Acme Ltda.',
    },
    consent: { given: true, timestamp: new Date('2026-11-21T09:13:58Z') },
    merkle: {
      root: ROOT,
      batchSize: 5,
      leafIndex: 2,
      siblings: [
        { position: 'right', hash: '1b'.repeat(32) },
        { position: 'left', hash: '2c'.repeat(32) },
        { position: 'right', hash: '3d'.repeat(32) },
      ],
    },
    evm: {
      status: evmPending ? 'pending' : 'registered',
      network: 'base-sepolia',
      chainId: 84532,
      easContract: '0x4200000000000000000000000000000000000021',
      schemaUid: `0x${'12'.repeat(32)}`,
      schema: 'bytes32 merkleRoot',
      attestationUid: evmPending ? null : ATTESTATION_UID,
      txHash: evmPending ? null : txHash,
      anchoredAt: evmPending ? null : new Date('2026-11-21T09:20:11Z'),
      explorerTxUrl: evmPending ? null : `https://sepolia.basescan.org/tx/${txHash}`,
      attestationUrl: evmPending ? null : ATTESTATION_URL,
    },
    stacks: {
      status: 'pending',
      network: 'testnet',
      contract: 'ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM.notary',
      txId: null,
      anchoredAt: null,
      explorerTxUrl: null,
    },
    issuedAt: new Date('2026-11-21T09:30:00Z'),
    signed: options.signed ?? false,
  };
}

let workDir = '';
beforeAll(async () => {
  workDir = await mkdtemp(path.join(tmpdir(), 'certificate-render-'));
});
afterAll(async () => {
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

/** Writes `bytes` to a fresh file of the temp dir and returns its path. */
async function save(name: string, bytes: Uint8Array): Promise<string> {
  const file = path.join(workDir, `${randomUUID()}-${name.replace(/[^A-Za-z0-9._-]/g, '_')}`);
  await writeFile(file, bytes);
  return file;
}

async function pageCount(file: string): Promise<number> {
  const result = await tool('qpdf', ['--show-npages', file]);
  expect(result.code, result.stderr).toBe(0);
  return Number(result.stdout.trim());
}

async function qpdfCheck(file: string): Promise<void> {
  const result = await tool('qpdf', ['--check', file]);
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
}

async function text(file: string, first: number, last: number): Promise<string> {
  const result = await tool('pdftotext', [
    '-f',
    String(first),
    '-l',
    String(last),
    '-enc',
    'UTF-8',
    file,
    '-',
  ]);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

/** The document /Title as pdfinfo prints it (UTF-8). */
async function titleOf(file: string): Promise<string | undefined> {
  const info = await tool('pdfinfo', ['-enc', 'UTF-8', file]);
  return /^Title:\s+(.*)$/m.exec(info.stdout)?.[1];
}

/** Decoded 8-bit greyscale or RGB PNG (what pdftoppm writes), as luminance rows. */
function decodePng(png: Buffer): { width: number; height: number; luma: Uint8Array } {
  let at = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (at < png.length) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      expect(data[8]).toBe(8);
      channels = data[9] === 2 ? 3 : data[9] === 0 ? 1 : 0;
      expect(channels).not.toBe(0);
    }
    if (type === 'IDAT') idat.push(data);
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = new Uint8Array(stride * height);
  for (let y = 0; y < height; y += 1) {
    const filter = raw[y * (stride + 1)] ?? 0;
    for (let x = 0; x < stride; x += 1) {
      const value = raw[y * (stride + 1) + 1 + x] ?? 0;
      const a = x >= channels ? (pixels[y * stride + x - channels] ?? 0) : 0;
      const b = y > 0 ? (pixels[(y - 1) * stride + x] ?? 0) : 0;
      const c = x >= channels && y > 0 ? (pixels[(y - 1) * stride + x - channels] ?? 0) : 0;
      const p = a + b - c;
      const paeth =
        Math.abs(p - a) <= Math.abs(p - b) && Math.abs(p - a) <= Math.abs(p - c)
          ? a
          : Math.abs(p - b) <= Math.abs(p - c)
            ? b
            : c;
      const predicted = [0, a, b, (a + b) >> 1, paeth][filter] ?? 0;
      pixels[y * stride + x] = (value + predicted) & 0xff;
    }
  }
  const luma = new Uint8Array(width * height);
  for (let i = 0; i < width * height; i += 1) {
    luma[i] =
      channels === 1
        ? (pixels[i] ?? 0)
        : Math.round(
            0.299 * (pixels[i * 3] ?? 0) +
              0.587 * (pixels[i * 3 + 1] ?? 0) +
              0.114 * (pixels[i * 3 + 2] ?? 0),
          );
  }
  return { width, height, luma };
}

/** Renders one page to PNG with pdftoppm and decodes it. */
async function rasterize(
  file: string,
  page: number,
  dpi: number,
  extra: string[] = [],
): Promise<{ png: string; width: number; height: number; luma: Uint8Array }> {
  const prefix = path.join(workDir, randomUUID());
  const result = await tool('pdftoppm', [
    '-r',
    String(dpi),
    '-png',
    '-f',
    String(page),
    '-l',
    String(page),
    '-singlefile',
    ...extra,
    file,
    prefix,
  ]);
  expect(result.code, result.stderr).toBe(0);
  const png = `${prefix}.png`;
  return { png, ...decodePng(await readFile(png)) };
}

function darkShare(luma: Uint8Array): number {
  let dark = 0;
  for (const v of luma) if (v < 128) dark += 1;
  return dark / luma.length;
}

/** Certificate pages of a rendered file: all pages when separate, the appended ones when stamped. */
async function checkRendered(
  file: string,
  rendered: RenderedCertificate,
  source: Uint8Array | null,
): Promise<{ firstCertificatePage: number; pages: number }> {
  await qpdfCheck(file);
  const pages = await pageCount(file);
  let first = 1;
  if (rendered.layout === 'stamped' && source) {
    expect(Buffer.compare(Buffer.from(rendered.pdf.subarray(0, source.length)), Buffer.from(source))).toBe(0);
    const original = await pageCount(await save('original.pdf', source));
    first = original + 1;
  }
  const certificatePages = pages - first + 1;
  expect(certificatePages).toBeGreaterThanOrEqual(1);
  const lastText = await text(file, pages, pages);
  expect(lastText).toContain(`Página ${certificatePages} de ${certificatePages}`);
  const image = await rasterize(file, pages, 50);
  expect(darkShare(image.luma)).toBeGreaterThan(0.005);
  return { firstCertificatePage: first, pages };
}

const STAMPED = [
  '90ms_rksj_h_sample.pdf',
  'ArabicCIDTrueType.pdf',
  'TAMReview.pdf',
  'alphatrans.pdf',
  'asciihexdecode.pdf',
  'attachment.pdf',
  'bad-PageLabels.pdf',
  'bigboundingbox.pdf',
  // Declare PDF/A (1b and 2b): stamped too, kept PDF/A (`pdfa.ts`).
  'bug886717.pdf',
  'empty.pdf',
  'file_pdfjs_form.pdf',
  'form_two_pages.pdf',
  'freeculture.pdf',
  'hello_world_rotated.pdf',
  'issue13242.pdf',
  'issue_cff_unsigned_bbox.pdf',
  'libtasn1.pdf',
  'rotated.pdf',
  'rotation.pdf',
  'shared-mime-info-spec.pdf',
  'signed_verified.pdf',
  'tracemonkey.pdf',
  'xfa_issue14315.pdf',
];

/** Fixtures that must fall back to a separate certificate, with the expected reason. */
const FALLBACK: Record<string, RegExp> = {
  'empty_protected.pdf': /encrypted/,
  'encrypted-attachment.pdf': /encrypted/,
  'helloworld-bad.pdf': /cross-reference/,
  'xref_command_missing.pdf': /cross-reference/,
  'GHOSTSCRIPT-698804-1-fuzzed.pdf': /cross-reference/,
  'Pages-tree-refs.pdf': /page tree.*loop/,
  'poppler-742-0-fuzzed.pdf': /cross-reference|unparseable/,
  'poppler-90-0-fuzzed.pdf': /cross-reference|unparseable/,
};

const pdfFixtures = (await readdir(path.join(FIXTURES, 'pdfs'))).filter((f) => f.endsWith('.pdf')).sort();
const otherFixtures = (await readdir(path.join(FIXTURES, 'files'))).sort();

describe('fixture PDFs', () => {
  it('are the expected set', () => {
    expect(pdfFixtures).toEqual([...STAMPED, ...Object.keys(FALLBACK)].sort());
  });

  it.concurrent.for(pdfFixtures)(
    '%s: renders, stamps or falls back as expected',
    async (name, { expect }) => {
      await limit(async () => {
        const source = new Uint8Array(await readFile(path.join(FIXTURES, 'pdfs', name)));
        const rendered = await renderCertificate(sampleData({ fileName: name }), source, { lang: 'pt' });
        const expectedReason = FALLBACK[name];
        if (expectedReason) {
          expect(rendered.layout).toBe('separate');
          expect(rendered.fallbackReason).toMatch(expectedReason);
        } else {
          expect(rendered.layout, rendered.fallbackReason).toBe('stamped');
          expect(rendered.fallbackReason).toBeUndefined();
        }
        await checkRendered(await save(name, rendered.pdf), rendered, source);
      });
    },
  );
});

describe('non-PDF fixtures', () => {
  it.concurrent.for(otherFixtures)('%s: separate certificate', async (name, { expect }) => {
    await limit(async () => {
      const rendered = await renderCertificate(
        sampleData({ fileName: name, mimeType: 'application/octet-stream' }),
        null,
        { lang: 'pt' },
      );
      expect(rendered.layout).toBe('separate');
      expect(rendered.fallbackReason).toBeUndefined();
      const file = await save(`${name}.pdf`, rendered.pdf);
      const { pages } = await checkRendered(file, rendered, null);
      expect(await titleOf(file)).toBe(name);
      expect(pages).toBeGreaterThanOrEqual(1);
    });
  });
});

describe('certificate content', () => {
  it('QR code decodes to the permanent attestation URL', async () => {
    const rendered = await renderCertificate(sampleData(), null, { lang: 'pt' });
    const image = await rasterize(await save('qr.pdf', rendered.pdf), 1, 200);
    const decoded = await tool('zbarimg', ['--raw', '-q', image.png]);
    expect(decoded.code, decoded.stderr).toBe(0);
    expect(decoded.stdout.trim()).toBe(ATTESTATION_URL);
  });

  it('QR code decodes to the verify URL while the attestation is pending, and the caption says so', async () => {
    const rendered = await renderCertificate(sampleData({ evmPending: true }), null, { lang: 'en' });
    const file = await save('qr-pending.pdf', rendered.pdf);
    const image = await rasterize(file, 1, 200);
    const decoded = await tool('zbarimg', ['--raw', '-q', image.png]);
    expect(decoded.stdout.trim()).toBe(VERIFY_URL);
    const content = (await text(file, 1, await pageCount(file))).replace(/\s+/g, ' ');
    expect(content).toContain('not included in a block yet');
    expect(content).toContain('Pending — not yet included in a block');
    expect(content).not.toContain(ATTESTATION_UID);
  });

  it('prints the serial, hash, attestation, Merkle proof, pending chain and compliance text (pt)', async () => {
    const source = new Uint8Array(await readFile(path.join(FIXTURES, 'pdfs', 'rotated.pdf')));
    const rendered = await renderCertificate(sampleData({ signed: true }), source, { lang: 'pt' });
    expect(rendered.layout).toBe('stamped');
    const file = await save('content.pdf', rendered.pdf);
    const pages = await pageCount(file);
    const content = await text(file, 2, pages);
    const flat = content.replace(/\s+/g, ' ');
    expect(content).toContain('Certificado de Notarização');
    expect(content).toContain('2026-000123');
    expect(content).toContain(HASH);
    expect(content).toContain(ATTESTATION_UID);
    expect(content).toContain(ROOT);
    for (const sibling of ['1b', '2c', '3d']) expect(content).toContain(sibling.repeat(32));
    expect(flat).toContain('Pendente — ainda não incluído em bloco');
    expect(flat).toContain(
      '21/11/2026 06:13:58 (horário de Brasília, UTC\u221203:00) · 2026-11-21 09:13:58 UTC',
    );
    expect(flat).toContain('Lei 13.709/2018, Art. 7º, I');
    for (const phrase of [
      'FIPS 180-4',
      'RFC 6962',
      '0x00',
      '0x01',
      'ETSI EN 319 142',
      'RFC 3161',
      '14.063/2020',
    ]) {
      expect(flat).toContain(phrase);
    }
    expect(flat).toContain(`head -c ${source.length}`);
    // The mark on the original page names the service and the verify link.
    const page1 = (await text(file, 1, 1)).replace(/\s+/g, ' ');
    expect(page1).toContain('Notary · Notarizado · Nº 2026-000123 · SHA-256 e3b0c44298fc1c14…');
    expect(page1).toContain(VERIFY_URL);
  });

  it('is in English with lang=en', async () => {
    const rendered = await renderCertificate(sampleData(), null, { lang: 'en' });
    const file = await save('en.pdf', rendered.pdf);
    const content = (await text(file, 1, await pageCount(file))).replace(/\s+/g, ' ');
    expect(content).toContain('Notarization Certificate');
    expect(content).toContain('Pending — not yet included in a block');
    expect(content).toContain('How to verify independently'.toUpperCase());
    expect(content).toMatch(/Page 1 of \d/);
  });

  /** `sampleData` with every time of the certificate at `iso` (upload, consent, anchor, issue). */
  function at(iso: string): CertificateData {
    const data = sampleData();
    const time = new Date(iso);
    return {
      ...data,
      document: { ...data.document, createdAt: time },
      consent: { given: true, timestamp: time },
      evm: data.evm ? { ...data.evm, anchoredAt: time } : null,
      issuedAt: time,
    };
  }

  it('prints each time in Brasília time and UTC: daylight saving in January 2018 (UTC−02:00)', async () => {
    const rendered = await renderCertificate(at('2018-01-15T12:00:00Z'), null, { lang: 'pt' });
    const file = await save('dst.pdf', rendered.pdf);
    const pages = await pageCount(file);
    const flat = (await text(file, 1, pages)).replace(/\s+/g, ' ');
    const pt = '15/01/2018 10:00:00 (horário de Brasília, UTC\u221202:00) · 2018-01-15 12:00:00 UTC';
    expect(flat).toContain(`Registrado em ${pt}`);
    expect(flat).toContain(`Ancorado em ${pt}`);
    expect(flat).toContain(`Emitido em ${pt}`);
    // The title, the consent paragraph and the footer of each page print it too.
    expect(flat.split(pt).length - 1).toBeGreaterThanOrEqual(4 + pages);
    expect(flat).not.toMatch(/UTC\u221203:00/);
    const en = await renderCertificate(at('2018-01-15T12:00:00Z'), null, { lang: 'en' });
    const enFile = await save('dst-en.pdf', en.pdf);
    const enFlat = (await text(enFile, 1, await pageCount(enFile))).replace(/\s+/g, ' ');
    expect(enFlat).toContain(
      'Registered at 2018-01-15 10:00:00 Brasília time (UTC\u221202:00) · 2018-01-15 12:00:00 UTC',
    );
  });

  it('prints UTC−03:00 for Brasília time since daylight saving ended (2026-07-01)', async () => {
    const rendered = await renderCertificate(at('2026-07-01T12:00:00Z'), null, { lang: 'pt' });
    const file = await save('std.pdf', rendered.pdf);
    const flat = (await text(file, 1, await pageCount(file))).replace(/\s+/g, ' ');
    expect(flat).toContain(
      'Registrado em 01/07/2026 09:00:00 (horário de Brasília, UTC\u221203:00) · 2026-07-01 12:00:00 UTC',
    );
    expect(flat).not.toMatch(/UTC\u221202:00/);
  });

  const BIDI_CONTROLS = /[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
  it.each(['Relatório_ação_2026.pdf', 'Договор.pdf', 'عقد.pdf', 'חוזה חדש.docx', 'résumé 😀.txt'])(
    'renders the file name %s',
    async (name) => {
      const rendered = await renderCertificate(sampleData({ fileName: name }), null, { lang: 'pt' });
      const file = await save('name.pdf', rendered.pdf);
      const content = (await text(file, 1, 1)).replace(BIDI_CONTROLS, '');
      expect(content).toContain(name);
      expect(await titleOf(file)).toBe(name);
    },
  );

  it('shows characters without a glyph as U+XXXX and keeps the exact name in /Title', async () => {
    const name = '契約書.pdf';
    const rendered = await renderCertificate(sampleData({ fileName: name }), null, { lang: 'pt' });
    const file = await save('cjk.pdf', rendered.pdf);
    const content = await text(file, 1, 1);
    expect(content).toContain('U+5951U+7D04U+66F8.pdf');
    expect(content).toContain('U+XXXX');
    expect(await titleOf(file)).toBe(name);
  });

  it('flows onto more pages when the Merkle proof is long', async () => {
    const data = sampleData();
    if (!data.merkle) throw new Error('sample has a proof');
    data.merkle.batchSize = 2 ** 40;
    data.merkle.siblings = Array.from({ length: 40 }, (_, i) => ({
      position: i % 2 === 0 ? ('left' as const) : ('right' as const),
      hash: i.toString(16).padStart(2, '0').repeat(32),
    }));
    const rendered = await renderCertificate(data, null, { lang: 'pt' });
    const file = await save('long.pdf', rendered.pdf);
    await qpdfCheck(file);
    const pages = await pageCount(file);
    expect(pages).toBeGreaterThanOrEqual(3);
    const content = await text(file, 1, pages);
    expect(content).toContain('27'.repeat(32));
    expect(content).toContain(`Página ${pages} de ${pages}`);
  });
});

describe('stamping', () => {
  /** A PDF whose four pages are shown rotated by 0, 90, 180, 270 with a CropBox away from the origin. */
  async function rotatedSource(): Promise<Uint8Array> {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    for (const rotation of [0, 90, 180, 270]) {
      const page = doc.addPage([600, 800]);
      page.setMediaBox(-100, -50, 700, 850);
      page.setCropBox(-80, -20, 520, 760);
      page.setRotation(degrees(rotation));
      page.drawText(`Rotate ${rotation}`, { x: 100, y: 400, size: 30, font });
    }
    return doc.save({ useObjectStreams: false });
  }

  it('puts the mark horizontally at the bottom of each page as displayed (Rotate, CropBox)', async () => {
    const source = await rotatedSource();
    const rendered = await renderCertificate(sampleData(), source, { lang: 'pt' });
    expect(rendered.layout).toBe('stamped');
    const file = await save('rotations.pdf', rendered.pdf);
    await qpdfCheck(file);
    const sourceFile = await save('rotations-src.pdf', source);
    for (let page = 1; page <= 4; page += 1) {
      const { width, height, luma } = await rasterize(file, page, 72, ['-cropbox', '-gray']);
      const before = await rasterize(sourceFile, page, 72, ['-cropbox', '-gray']);
      // Bottom band (last 16 px = 16 pt): inked across much of the width (a horizontal mark), blank before.
      const inkedColumns = new Set<number>();
      let inkedBefore = 0;
      for (let y = height - 16; y < height; y += 1) {
        for (let x = 0; x < width; x += 1) {
          if ((luma[y * width + x] ?? 255) < 200) inkedColumns.add(x);
          if ((before.luma[y * width + x] ?? 255) < 200) inkedBefore += 1;
        }
      }
      expect(inkedBefore).toBe(0);
      expect(inkedColumns.size / width, `page ${page}`).toBeGreaterThan(0.4);
    }
  });

  it('wraps the original content in q/Q before the mark', async () => {
    const source = new Uint8Array(await readFile(path.join(FIXTURES, 'pdfs', 'hello_world_rotated.pdf')));
    const rendered = await renderCertificate(sampleData(), source, { lang: 'pt' });
    const file = await save('wrap.pdf', rendered.pdf);
    const pages = await tool('qpdf', ['--show-pages', file]);
    const firstPage = /page 1: (\d+) 0 R/.exec(pages.stdout)?.[1];
    const dict = await tool('qpdf', [`--show-object=${firstPage}`, file]);
    const contents =
      /\/Contents \[ ([^\]]+) \]/
        .exec(dict.stdout)?.[1]
        ?.trim()
        .split(/ 0 R ?/)
        .filter(Boolean) ?? [];
    expect(contents.length).toBeGreaterThanOrEqual(4);
    const stream = async (n: string | undefined) =>
      (await tool('qpdf', [`--show-object=${n}`, '--filtered-stream-data', file])).stdout.trim();
    expect(await stream(contents[0])).toBe('q');
    expect(await stream(contents.at(-2))).toBe('Q');
    expect(await stream(contents.at(-1))).toMatch(/Do Q/);
  });

  it('writes a classic xref section chained to the original with the same /Root and /ID', async () => {
    const source = new Uint8Array(await readFile(path.join(FIXTURES, 'pdfs', 'rotated.pdf')));
    const rendered = await renderCertificate(sampleData(), source, { lang: 'pt' });
    const update = Buffer.from(rendered.pdf.subarray(source.length)).toString('latin1');
    const original = Buffer.from(source).toString('latin1');
    const startxref = /startxref\s+(\d+)\s+%%EOF\s*$/.exec(original)?.[1];
    expect(update).toMatch(/\nxref\n/);
    const trailer = /trailer\s*(<<[\s\S]*?>>)\s*startxref/.exec(update)?.[1] ?? '';
    expect(trailer).toContain(`/Prev ${startxref}`);
    const originalTrailer = original.slice(original.lastIndexOf('trailer'));
    const rootRef = /\/Root (\d+ \d+ R)/.exec(originalTrailer)?.[1];
    expect(trailer).toContain(`/Root ${rootRef}`);
    const id = /\/ID\s*\[\s*<([0-9A-Fa-f]+)>/.exec(originalTrailer)?.[1];
    expect(trailer.toLowerCase()).toContain((id ?? 'no id').toLowerCase());
    expect(update.endsWith('%%EOF\n')).toBe(true);
  });

  it('writes an xref stream when the original ends with one', async () => {
    const source = new Uint8Array(await readFile(path.join(FIXTURES, 'pdfs', 'libtasn1.pdf')));
    const rendered = await renderCertificate(sampleData(), source, { lang: 'pt' });
    const file = await save('xrefstream.pdf', rendered.pdf);
    await qpdfCheck(file);
    const all = Buffer.from(rendered.pdf).toString('latin1');
    const offset = Number(/startxref\s+(\d+)\s+%%EOF\s*$/.exec(all)?.[1]);
    expect(offset).toBeGreaterThan(source.length);
    const section = all.slice(offset, offset + 400);
    expect(section).toMatch(/^\d+ 0 obj\s*<<[\s\S]*\/Type \/XRef/);
    expect(section).toContain('/Prev 261644');
    expect(all.slice(source.length)).not.toMatch(/\nxref\n/);
  });

  it('adds a newline when the original does not end with one', async () => {
    const full = new Uint8Array(await readFile(path.join(FIXTURES, 'pdfs', 'hello_world_rotated.pdf')));
    let end = full.length;
    while (full[end - 1] === 0x0a || full[end - 1] === 0x0d) end -= 1;
    const source = full.slice(0, end);
    const rendered = await renderCertificate(sampleData(), source, { lang: 'pt' });
    expect(rendered.layout).toBe('stamped');
    expect(rendered.pdf[source.length]).toBe(0x0a);
    await checkRendered(await save('no-eol.pdf', rendered.pdf), rendered, source);
  });

  it.each([
    ['garbage', new TextEncoder().encode('not a pdf at all')],
    ['header only', new TextEncoder().encode('%PDF-1.7\n%%EOF\n')],
    ['empty', new Uint8Array(0)],
  ])('falls back without throwing for %s', async (_, source) => {
    const rendered = await renderCertificate(sampleData(), source, { lang: 'pt' });
    expect(rendered.layout).toBe('separate');
    expect(rendered.fallbackReason).toBeTruthy();
  });

  it('falls back for a truncated PDF', async () => {
    const full = new Uint8Array(await readFile(path.join(FIXTURES, 'pdfs', 'tracemonkey.pdf')));
    const rendered = await renderCertificate(sampleData(), full.slice(0, full.length >> 1), { lang: 'pt' });
    expect(rendered.layout).toBe('separate');
    expect(rendered.fallbackReason).toMatch(/startxref/);
  });
});

/** Signs with `openssl cms` (detached CAdES, SHA-256) and a throwaway self-signed certificate. */
class OpenSslSigner extends Signer {
  constructor(
    private readonly cert: string,
    private readonly key: string,
  ) {
    super();
  }

  override async sign(pdfBuffer: Buffer): Promise<Buffer> {
    const input = await save('tbs.bin', pdfBuffer);
    const output = `${input}.p7s`;
    const result = await tool('openssl', [
      'cms',
      '-sign',
      '-binary',
      '-cades',
      '-md',
      'sha256',
      '-in',
      input,
      '-signer',
      this.cert,
      '-inkey',
      this.key,
      '-outform',
      'DER',
      '-out',
      output,
    ]);
    expect(result.code, result.stderr).toBe(0);
    return readFile(output);
  }
}

describe('signature placeholder', () => {
  let signer: OpenSslSigner;
  beforeAll(async () => {
    const key = path.join(workDir, 'key.pem');
    const cert = path.join(workDir, 'cert.pem');
    const made = await tool('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-subj',
      '/CN=Certificate renderer test',
      '-days',
      '2',
    ]);
    expect(made.code, made.stderr).toBe(0);
    signer = new OpenSslSigner(cert, key);
  });

  const placeholder: RenderOptions['signaturePlaceholder'] = {
    signatureLength: 16384,
    reason: 'Notarization certificate',
    location: 'Brasil',
    name: 'Notary',
    contactInfo: 'https://notary.example.com',
  };

  async function sign(pdf: Uint8Array): Promise<string> {
    const signed = await new SignPdf().sign(Buffer.from(pdf), signer);
    const file = await save('signed.pdf', signed);
    await qpdfCheck(file);
    return file;
  }

  /** pdfsig's report, one entry per signature. */
  async function signatures(file: string): Promise<string[]> {
    const result = await tool('pdfsig', [file]);
    return result.stdout.split(/^Signature #\d+:$/m).slice(1);
  }

  /** The unsigned output has the placeholder and is structurally valid as is. */
  async function assertPlaceholder(pdf: Uint8Array): Promise<void> {
    const textual = Buffer.from(pdf).toString('latin1');
    expect(textual).toContain('/ByteRange [ 0 /********** /********** /********** ]');
    expect(textual).toContain('/SubFilter /ETSI.CAdES.detached');
    await qpdfCheck(await save('placeholder.pdf', pdf));
  }

  it('separate layout: placeholder, then a real signature pdfsig validates', async () => {
    const rendered = await renderCertificate(sampleData({ fileName: 'contrato.txt', signed: true }), null, {
      lang: 'pt',
      signaturePlaceholder: placeholder,
    });
    await assertPlaceholder(rendered.pdf);
    const report = await signatures(await sign(rendered.pdf));
    expect(report).toHaveLength(1);
    expect(report[0]).toContain('Signature Validation: Signature is Valid.');
    expect(report[0]).toContain('ETSI.CAdES.detached');
  });

  it('stamped layout of a signed PDF: the earlier signature stays valid beside the new one', async () => {
    const first = await renderCertificate(sampleData({ signed: true }), null, {
      lang: 'pt',
      signaturePlaceholder: placeholder,
    });
    const signedOnce = await readFile(await sign(first.pdf));
    const second = await renderCertificate(sampleData({ signed: true }), new Uint8Array(signedOnce), {
      lang: 'en',
      signaturePlaceholder: placeholder,
    });
    expect(second.layout).toBe('stamped');
    await assertPlaceholder(second.pdf);
    const report = await signatures(await sign(second.pdf));
    expect(report).toHaveLength(2);
    for (const signature of report) expect(signature).toContain('Signature Validation: Signature is Valid.');
  });

  it.each(['xfa_issue14315.pdf', 'freeculture.pdf'])('stamped %s: signs and validates', async (name) => {
    const source = new Uint8Array(await readFile(path.join(FIXTURES, 'pdfs', name)));
    const rendered = await renderCertificate(sampleData({ signed: true }), source, {
      lang: 'pt',
      signaturePlaceholder: placeholder,
    });
    expect(rendered.layout).toBe('stamped');
    await assertPlaceholder(rendered.pdf);
    const report = await signatures(await sign(rendered.pdf));
    expect(report).toHaveLength(1);
    expect(report[0]).toContain('Signature Validation: Signature is Valid.');
  });

  it('signed_verified.pdf: the original signature is untouched, the new one is valid', async () => {
    const source = new Uint8Array(await readFile(path.join(FIXTURES, 'pdfs', 'signed_verified.pdf')));
    const before = await signatures(await save('signed_verified.pdf', source));
    const rendered = await renderCertificate(sampleData({ signed: true }), source, {
      lang: 'pt',
      signaturePlaceholder: placeholder,
    });
    expect(rendered.layout).toBe('stamped');
    await assertPlaceholder(rendered.pdf);
    const after = await signatures(await sign(rendered.pdf));
    expect(after).toHaveLength(2);
    // pdfsig's verdict on the original signature is unchanged. (poppler 22.12 reports "Digest Mismatch."
    // for this fixture even before stamping: its SignedData lists SHA-1 while the signer used SHA-256.)
    const verdict = (report: string | undefined) => /Signature Validation: (.*)/.exec(report ?? '')?.[1];
    expect(verdict(after[0])).toBe(verdict(before[0]));
    expect(after[0]).toContain('Signature Field Name: Signature1');
    expect(after[1]).toContain('Signature Validation: Signature is Valid.');
    expect(after[1]).not.toContain('Signature Field Name: Signature1');
    // Independently: the original ByteRange still hashes to the CMS messageDigest (SHA-256).
    await expectByteRangeDigestMatches(Buffer.from(rendered.pdf));
  });
});

/** The first signature's ByteRange digest equals the messageDigest attribute of its CMS (openssl asn1parse). */
async function expectByteRangeDigestMatches(pdf: Buffer): Promise<void> {
  const textual = pdf.toString('latin1');
  const match = /\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/.exec(textual);
  const [a, b, c, d] = (match?.slice(1) ?? []).map(Number);
  if (a === undefined || b === undefined || c === undefined || d === undefined)
    throw new Error('no ByteRange');
  const { createHash } = await import('node:crypto');
  const digest = createHash('sha256')
    .update(pdf.subarray(a, a + b))
    .update(pdf.subarray(c, c + d))
    .digest('hex');
  // The gap is `<hex>` (this fixture's range is one byte off and leaves the brackets in the signed part).
  const padded = Buffer.from(textual.slice(a + b, c).replace(/[^0-9A-Fa-f]/g, ''), 'hex');
  // The DER SEQUENCE's own length says where the zero padding starts.
  const lengthBytes = (padded[1] ?? 0) & 0x80 ? (padded[1] ?? 0) & 0x7f : 0;
  const length = lengthBytes ? padded.readUIntBE(2, lengthBytes) : (padded[1] ?? 0);
  const der = await save('cms.der', padded.subarray(0, 2 + lengthBytes + length));
  const parsed = await tool('openssl', ['asn1parse', '-inform', 'DER', '-in', der]);
  const after = parsed.stdout.slice(parsed.stdout.indexOf(':messageDigest'));
  expect(/\[HEX DUMP\]:([0-9A-F]+)/.exec(after)?.[1]?.toLowerCase()).toBe(digest);
}
