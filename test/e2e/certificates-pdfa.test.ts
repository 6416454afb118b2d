/**
 * PDF/A of certificates through the running service, checked by the independent PDF/A checker
 * (`test/harness/pdfa`: qpdf and Debian's pikepdf, never the product's PDF code):
 * - every separate certificate (non-PDF files, PDFs that cannot be stamped) is PDF/A-3b, `X-Pdfa: PDF/A-3b`;
 * - a stamped original that declares no PDF/A gives `X-Pdfa: none; original not PDF/A`, the certificate says so,
 *   and the appended pages still use embedded fonts and printable annotations with appearances only;
 * - a stamped PDF/A original stays PDF/A: the copy of a PDF/A-2b original declares PDF/A-3b (the receipt is an
 *   associated file) and adds no failure the original did not have, also under an output intent that is not RGB;
 * - signed certificates (PAdES B-T, and B-LTA with the /DSS and document timestamp updates) stay PDF/A-3b.
 * The PDF/A-2b originals are derived with pikepdf from the checker's own sample (`make_samples.py`).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { DocumentDto } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureFiles } from '../harness/fixtures';
import { uploadFile } from '../harness/http';
import { checkPdfAFiles, expectPdfA3b, type PdfAConformance } from '../harness/pdfa/conformance.testing';
import { createTestPki, type TestPki } from '../harness/pki';
import { type RevocationPki, startRevocationPki } from '../harness/revocation-pki';
import { startTestService, type TestService } from '../harness/service';
import { signingEnv, startTestTsa, type TestTsa } from '../harness/tsa';

const exec = promisify(execFile);
const PYTHON = '/usr/bin/python3';
const SAMPLES = path.resolve(import.meta.dirname, '../harness/pdfa/make_samples.py');

/**
 * Turns the checker's PDF/A-3b sample into a PDF/A-2b original (pikepdf only): pdfaid:part 2, no embedded file
 * (PDF/A-2 allows only PDF/A ones). With `gray`, its output intent's profile becomes a grey (`/N 1`) ICC
 * profile, a minimal v2 display profile written here (header and a kTRC gamma tag).
 */
const TO_PDFA2B = `
import re, struct, sys, pikepdf
from pikepdf import Name
src, out, gray = sys.argv[1], sys.argv[2], sys.argv[3] == 'gray'
pdf = pikepdf.open(src)
root = pdf.Root
xmp = root.Metadata.read_bytes().decode('utf-8')
xmp = re.sub(r'(pdfaid:part[>="\\']+)3', r'\\g<1>2', xmp)
root.Metadata = pdf.make_stream(xmp.encode('utf-8'), Type=Name.Metadata, Subtype=Name.XML)
if '/AF' in root: del root['/AF']
if '/Names' in root and '/EmbeddedFiles' in root.Names: del root.Names['/EmbeddedFiles']
if gray:
    trc = b'curv' + b'\\0' * 4 + struct.pack('>IH', 1, 0x0233) + b'\\0\\0'
    tags = struct.pack('>I', 1) + b'kTRC' + struct.pack('>II', 128 + 4 + 12, len(trc))
    body = tags + trc
    header = struct.pack('>I', 128 + len(body)) + b'none' + bytes([2, 0x10, 0, 0]) + b'mntrGRAYXYZ '
    header += b'\\0' * 12 + b'acsp' + b'\\0' * (128 - 40)
    profile = pdf.make_stream(header + body, N=1)
    for intent in root.OutputIntents:
        intent.DestOutputProfile = profile
pdf.save(out, object_stream_mode=pikepdf.ObjectStreamMode.disable)
`;

/** Originals that declare PDF/A among the shared fixtures: what they declare. */
const PDFA_FIXTURES: Record<string, string> = {
  'bug886717.pdf': 'PDF/A-1b',
  'issue13242.pdf': 'PDF/A-2b',
};

let work: string;
const FIXTURES = await fixtureFiles();

async function fetchCertificate(
  t: TestService,
  token: string,
  id: string,
  query = '',
): Promise<{ status: number; headers: Headers; bytes: Buffer }> {
  const res = await fetch(`${t.url}/api/documents/${id}/certificate${query}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

async function pageCount(file: string): Promise<number> {
  const { stdout } = await exec('qpdf', ['--show-npages', file]);
  return Number(stdout.trim());
}

/** The text of `file` from page `first` on, whitespace collapsed (sentences wrap across lines). */
async function pdfText(file: string, first: number): Promise<string> {
  const { stdout } = await exec('pdftotext', ['-f', String(first), '-enc', 'UTF-8', file, '-']);
  return stdout.replace(/\s+/g, ' ');
}

/** Failures of the original that its stamped copy may keep (the copy's own declaration aside). */
function failureKeys(result: PdfAConformance): Set<string> {
  return new Set(result.failures.filter((f) => f.clause !== '6.6.4').map((f) => `${f.clause} ${f.message}`));
}

/** Failures located on a page after `originalPages` (the appended certificate pages). */
function onAppendedPages(result: PdfAConformance, originalPages: number, clauses: string[]) {
  return result.failures.filter((f) => {
    const page = /\bpage (\d+)\b/.exec(f.message);
    return clauses.includes(f.clause) && page !== null && Number(page[1]) > originalPages;
  });
}

/** Writes the PDF/A-2b originals derived from the checker's sample: RGB and grey output intents. */
async function makePdfA2bOriginals(): Promise<{ rgb: string; gray: string }> {
  const samples = path.join(work, 'samples');
  await exec(PYTHON, [SAMPLES, samples]);
  const rgb = path.join(work, 'pdfa-2b-original.pdf');
  const gray = path.join(work, 'pdfa-2b-gray-original.pdf');
  await exec(PYTHON, ['-c', TO_PDFA2B, path.join(samples, 'good.pdf'), rgb, 'rgb']);
  await exec(PYTHON, ['-c', TO_PDFA2B, path.join(samples, 'good.pdf'), gray, 'gray']);
  return { rgb, gray };
}

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), 'notary-cert-pdfa-'));
});

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('PDF/A of unsigned certificates (PGlite, anchoring off)', () => {
  let t: TestService;
  const originals: string[] = [];
  /** Per original: the certificate file, its X-Pdfa header. */
  const issued = new Map<string, { file: string; header: string | null }>();
  const reports = new Map<string, PdfAConformance>();
  const originalReports = new Map<string, PdfAConformance>();

  beforeAll(async () => {
    const made = await makePdfA2bOriginals();
    originals.push(...FIXTURES, made.rgb, made.gray);
    t = await startTestService('pglite');
    for (const file of originals) {
      // A session lasts at most 5 minutes: a fresh one per file, however slow the machine.
      const token = await t.token('pdfa@example.com');
      const up = await uploadFile(t.url, token, file);
      expect(up.status).toBe(201);
      const doc = up.body as unknown as DocumentDto;
      const res = await fetchCertificate(t, token, doc.id);
      expect(res.status).toBe(200);
      const out = path.join(work, `certificate-${path.basename(file)}.pdf`);
      await writeFile(out, res.bytes);
      issued.set(file, { file: out, header: res.headers.get('x-pdfa') });
    }
    const files = [...issued.values()].map((i) => i.file);
    (await checkPdfAFiles(files)).forEach((report, i) => {
      reports.set(originals[i] ?? '', report);
    });
    const pdfs = originals.filter((f) => f.endsWith('.pdf'));
    (await checkPdfAFiles(pdfs)).forEach((report, i) => {
      originalReports.set(pdfs[i] ?? '', report);
    });
  }, 300_000);

  afterAll(async () => {
    await t?.close();
  });

  it('issues a certificate of every fixture and says what it produced in X-Pdfa', () => {
    expect(issued.size).toBe(FIXTURES.length + 2);
    const headers = new Set([...issued.values()].map((i) => i.header));
    expect(headers).toEqual(
      new Set([
        'PDF/A-3b',
        'none; original not PDF/A',
        'PDF/A-3b; original declared PDF/A-1b',
        'PDF/A-3b; original declared PDF/A-2b',
      ]),
    );
  });

  it('makes every separate certificate PDF/A-3b (non-PDF files, PDFs that cannot be stamped)', async () => {
    const separate = originals.filter((f) => issued.get(f)?.header === 'PDF/A-3b');
    // contrato.txt, the images and archives, the encrypted and damaged PDFs.
    expect(separate.length).toBeGreaterThanOrEqual(10);
    for (const file of separate) {
      const report = reports.get(file);
      if (!report) throw new Error(`no report for ${file}`);
      expect(report.checked.length, file).toBeGreaterThanOrEqual(20);
      expectPdfA3b(report);
    }
    const one = issued.get(separate[0] ?? '');
    expect(await pdfText(one?.file ?? '', 1)).toContain(
      'Este certificado é um arquivo PDF/A-3b (ISO 19005-3)',
    );
  });

  it('stamps originals that are not PDF/A as before, says so, and adds only embedded fonts', async () => {
    const stamped = originals.filter((f) => issued.get(f)?.header === 'none; original not PDF/A');
    expect(stamped.length).toBeGreaterThanOrEqual(15);
    for (const file of stamped) {
      const report = reports.get(file);
      const out = issued.get(file)?.file ?? '';
      if (!report) throw new Error(`no report for ${file}`);
      const pages = await pageCount(file);
      // Fonts, annotation flags and appearances of the appended pages: none fails.
      expect(onAppendedPages(report, pages, ['6.2.11.4.1', '6.3.2', '6.3.3']), file).toEqual([]);
      // The certificate itself (a page after the original's) carries an embedded font and says what it is not.
      expect(report.checked).toContain('6.2.11.4.1');
      expect(await pdfText(out, pages + 1), file).toContain('O original não é PDF/A');
    }
  });

  it('keeps PDF/A originals PDF/A: part 3 for the receipt, no failure the original did not have', async () => {
    const kept = originals.filter((f) => issued.get(f)?.header?.startsWith('PDF/A-3b; original declared'));
    expect(kept.map((f) => path.basename(f)).sort()).toEqual(
      ['bug886717.pdf', 'issue13242.pdf', 'pdfa-2b-gray-original.pdf', 'pdfa-2b-original.pdf'].sort(),
    );
    for (const file of kept) {
      const name = path.basename(file);
      const report = reports.get(file);
      const before = originalReports.get(file);
      if (!report || !before) throw new Error(`no report for ${name}`);
      expect(report.declared, name).toEqual({ part: 3, conformance: 'B' });
      const allowed = failureKeys(before);
      expect(
        report.failures.filter((f) => !allowed.has(`${f.clause} ${f.message}`)),
        name,
      ).toEqual([]);
      const expected = PDFA_FIXTURES[name] ?? 'PDF/A-2b';
      expect(issued.get(file)?.header).toBe(`PDF/A-3b; original declared ${expected}`);
      const text = await pdfText(issued.get(file)?.file ?? '', (await pageCount(file)) + 1);
      expect(text).toContain(`O original declara ${expected}; esta cópia declara PDF/A-3b porque o recibo`);
    }
    // The two originals the checker passes but for their declared part: their copies pass fully.
    expectPdfA3b(reports.get(kept.find((f) => f.endsWith('issue13242.pdf')) ?? '') as PdfAConformance);
    expectPdfA3b(reports.get(kept.find((f) => f.endsWith('pdfa-2b-original.pdf')) ?? '') as PdfAConformance);
  });

  it('draws in DeviceGray under a grey output intent (no DeviceRGB failure added)', async () => {
    const file = originals.find((f) => f.endsWith('pdfa-2b-gray-original.pdf')) ?? '';
    const report = reports.get(file);
    if (!report) throw new Error('no report');
    expect(onAppendedPages(report, await pageCount(file), ['6.2.4.3', '6.2.11.4.1'])).toEqual([]);
    expect(report.failures.filter((f) => /NotaryMark/.test(f.message))).toEqual([]);
  });
});

describe('PDF/A of signed certificates', () => {
  let pdfa2b: string;
  let contract: string;

  beforeAll(async () => {
    pdfa2b = (await makePdfA2bOriginals()).rgb;
    contract = FIXTURES.find((f) => path.basename(f) === 'contrato.txt') ?? '';
  }, 120_000);

  /** Uploads the PDF/A-2b original and a text file, and fetches both certificates signed. */
  async function signedCertificates(t: TestService, level: string): Promise<string[]> {
    const out: string[] = [];
    for (const file of [pdfa2b, contract]) {
      const token = await t.token(`pdfa-${level.toLowerCase()}@example.com`);
      const up = await uploadFile(t.url, token, file);
      expect(up.status).toBe(201);
      const doc = up.body as unknown as DocumentDto;
      const res = await fetchCertificate(t, token, doc.id, '?signed=1');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-signature-level')).toBe(level);
      expect(res.headers.get('x-pdfa')).toBe(
        file === pdfa2b ? 'PDF/A-3b; original declared PDF/A-2b' : 'PDF/A-3b',
      );
      const saved = path.join(work, `signed-${level}-${path.basename(file)}.pdf`);
      await writeFile(saved, res.bytes);
      out.push(saved);
    }
    return out;
  }

  it('PAdES B-T: the signature covers the whole file but its /Contents, and the file stays PDF/A-3b', async () => {
    let pki: TestPki | undefined;
    let tsa: TestTsa | undefined;
    let t: TestService | undefined;
    try {
      pki = await createTestPki();
      tsa = await startTestTsa(pki);
      t = await startTestService('pglite', { ...signingEnv(pki, tsa), SIGNING_LEVEL: 'B-T' });
      const files = await signedCertificates(t, 'B-T');
      for (const report of await checkPdfAFiles(files)) {
        expectPdfA3b(report);
        expect(report.checked).toEqual(expect.arrayContaining(['6.4.3', '6.1.12']));
        // B-T: the signature is the last revision; nothing follows its byte ranges.
        expect(report.notes).toEqual([]);
      }
      const pdf = await readFile(files[0] ?? '');
      expect(pdf.includes('/DocMDP')).toBe(false);
    } finally {
      await t?.close();
      await tsa?.stop();
      await pki?.dispose();
    }
  }, 180_000);

  it('PAdES B-LTA: the /DSS and document timestamp updates keep the XMP and output intent', async () => {
    let rpki: RevocationPki | undefined;
    let t: TestService | undefined;
    try {
      rpki = await startRevocationPki();
      t = await startTestService('pglite', {
        SIGNING_CERT: rpki.signer.chainPath,
        SIGNING_KEY: rpki.signer.keyPath,
        TSA_URL: rpki.tsaUrl,
        TSA_CA_CERTS: rpki.caChainPath,
        REVOCATION_ALLOW_HOSTS: rpki.allowHosts,
      });
      const files = await signedCertificates(t, 'B-LTA');
      for (const report of await checkPdfAFiles(files)) expectPdfA3b(report);
      const script = `
import json, sys, pikepdf
pdf = pikepdf.open(sys.argv[1])
root = pdf.Root
print(json.dumps({'dss': '/DSS' in root, 'metadata': '/Metadata' in root, 'intents': len(root.OutputIntents),
  'doctimestamps': sum(1 for f in root.AcroForm.Fields if f.get('/V') is not None and f.V.get('/Type') == '/DocTimeStamp')}))
`;
      for (const file of files) {
        const facts = JSON.parse((await exec(PYTHON, ['-c', script, file])).stdout);
        expect(facts).toEqual({ dss: true, metadata: true, intents: 1, doctimestamps: 1 });
      }
    } finally {
      await t?.close();
      await rpki?.stop();
    }
  }, 240_000);
});
