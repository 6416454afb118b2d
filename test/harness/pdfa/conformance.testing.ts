import { execFile } from 'node:child_process';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';

/** Debian's interpreter: python3-pikepdf is installed for it (`.ci/install-tools.sh`), not for other pythons. */
const PYTHON = '/usr/bin/python3';
const SCRIPT = path.join(import.meta.dirname, 'pdfa_check.py');

/**
 * The ISO 19005-3 (PDF/A-3) clauses `pdfa_check.py` examines, with what it checks for each: clause ids as veraPDF's
 * rule ids name them. This is a subset of PDF/A-3b: a file with no failures passed these checks, nothing more
 * (no glyph or width checks, no XMP extension schemas, no CMS content of signatures). Kept in the order and wording
 * of the script's CLAUSES table (a test compares the two).
 */
export const PDFA_CHECKED_CLAUSES: readonly { id: string; description: string }[] = [
  {
    id: '6.1.2',
    description:
      'file header: %PDF-1.n (n 0-7) at byte 0, then EOL, then a % comment with at least 4 bytes > 127',
  },
  { id: '6.1.3', description: 'trailer: /ID present, no /Encrypt, nothing after the last %%EOF but one EOL' },
  {
    id: '6.1.4',
    description:
      'cross-reference and objects: `qpdf --check` exits 0 (xref, object syntax, stream lengths, decoding)',
  },
  {
    id: '6.1.5',
    description:
      'Info dictionary entries equal their XMP equivalents (Title, Author, Subject, Keywords, Creator, Producer, ' +
      'CreationDate, ModDate; dates as instants)',
  },
  { id: '6.1.7.1', description: 'no stream dictionary has /F, /FFilter or /FDecodeParms' },
  { id: '6.1.7.2', description: 'no stream uses the LZWDecode or Crypt filter' },
  {
    id: '6.1.12',
    description: '/Perms holds only /UR3 and /DocMDP; no DocMDP /P 1 signature followed by later revisions',
  },
  {
    id: '6.2.3',
    description:
      'a /GTS_PDFA1 OutputIntent with an ICC DestOutputProfile (class prtr/mntr, version < 5, /N matching the ' +
      "header's colour space); all DestOutputProfiles are one object",
  },
  {
    id: '6.2.4.3',
    description:
      'DeviceRGB/DeviceCMYK/DeviceGray used in content (operators, images, inline images, shadings) only with a ' +
      'matching output intent or a Default colour space',
  },
  { id: '6.2.8', description: 'no image XObject has /OPI or /Alternates or /Interpolate true' },
  {
    id: '6.2.9',
    description:
      'no reference XObjects (/Ref), no /OPI, /PS or /Subtype2 /PS in form XObjects, no PostScript XObjects',
  },
  {
    id: '6.2.10',
    description:
      'blend modes are ISO 32000-1 ones; a page using transparency has an output intent or a page group /CS',
  },
  {
    id: '6.2.11.4.1',
    description:
      'every font in the resources of pages, form XObjects, patterns and annotation appearances has an embedded ' +
      'font program (Type3 exempt; Type0 through its descendant)',
  },
  {
    id: '6.3.2',
    description:
      'every annotation but Popup has /F with Print set and Hidden, Invisible, NoView, ToggleNoView clear',
  },
  {
    id: '6.3.3',
    description: 'every annotation but Popup, Link and zero-area ones has /AP with /N, and /AP has only /N',
  },
  { id: '6.4.1', description: 'no /A or /AA on widgets and form fields; /NeedAppearances not true' },
  {
    id: '6.4.3',
    description:
      "every signature's /ByteRange is 4 integers from 0 whose gap is exactly the /Contents hex string and whose " +
      'end is the end of a revision (later revisions reported as notes)',
  },
  {
    id: '6.5.1',
    description:
      'no Launch, JavaScript (actions or /Names /JavaScript) or other forbidden actions; named actions only ' +
      'Next/Prev/First/LastPage',
  },
  { id: '6.5.2', description: 'no /AA on the catalog or pages' },
  {
    id: '6.6.2.1',
    description:
      'catalog /Metadata stream (/Type /Metadata, /Subtype /XML), UTF-8 well-formed XMP with an xpacket header ' +
      'without bytes/encoding; stricter than PDF/A-3 (as PDF/A-1 6.7.2): not filtered',
  },
  { id: '6.6.4', description: 'XMP pdfaid:part is 3 and pdfaid:conformance is B' },
  {
    id: '6.8',
    description:
      'every embedded file (EmbeddedFiles name tree, file attachment annotations) is in an /AF array, has ' +
      '/AFRelationship, /F and /UF, a MIME /Subtype and (stricter than veraPDF) /Params /ModDate',
  },
];

const entry = z.object({ clause: z.string(), message: z.string() });

const conformanceSchema = z.object({
  declared: z.object({ part: z.number().int(), conformance: z.string() }).nullable(),
  failures: z.array(entry),
  /** Facts that are not failures, e.g. bytes of later incremental updates after a signature's ranges. */
  notes: z.array(entry),
  checked: z.array(z.string()),
});

/**
 * What `pdfa_check.py` found in one file: the declared PDF/A part and conformance level (XMP pdfaid; null when
 * absent), the failures by ISO 19005-3 clause id, notes, and the clause ids it examined (a subset of
 * PDFA_CHECKED_CLAUSES: a file qpdf or pikepdf cannot open stops after the byte-level clauses).
 */
export type PdfAConformance = z.infer<typeof conformanceSchema>;

/**
 * Checks a PDF against the PDF/A-3b clauses in PDFA_CHECKED_CLAUSES with third-party readers only (qpdf and
 * Debian's pikepdf through /usr/bin/python3, never the product's PDF code). `pdf`: the bytes (written to a
 * temporary file) or a file path. Resolves with the parsed report; a broken or encrypted file gives failures, not
 * an error. Rejects when the path does not exist or the checker cannot run or prints something that is not a report.
 */
export async function checkPdfA(pdf: Uint8Array | string): Promise<PdfAConformance> {
  if (typeof pdf === 'string') {
    const [only] = await checkPdfAFiles([pdf]);
    if (!only) throw new Error(`pdfa_check.py gave no report for ${pdf}`);
    return only;
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pdfa-check-'));
  try {
    const file = path.join(dir, 'input.pdf');
    await writeFile(file, pdf);
    return await checkPdfA(file);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * checkPdfA for several files in one checker process (one Python start instead of one per file): the reports in
 * the order of `files` (paths, each must exist).
 */
export async function checkPdfAFiles(files: string[]): Promise<PdfAConformance[]> {
  // A missing path is a mistake in the test, not a non-conforming PDF.
  await Promise.all(files.map((f) => access(f)));
  const { stdout } = await promisify(execFile)(PYTHON, [SCRIPT, ...files], {
    maxBuffer: 64 * 1024 * 1024,
    timeout: 60_000 + 30_000 * files.length,
  });
  const lines = stdout.split('\n').filter((l) => l.trim() !== '');
  if (lines.length !== files.length) {
    throw new Error(`pdfa_check.py printed ${lines.length} reports for ${files.length} files`);
  }
  return lines.map((l) => conformanceSchema.parse(JSON.parse(l)));
}

/**
 * Throws unless `result` declares PDF/A-3b (pdfaid part 3, conformance B) and no checked clause failed; the error
 * lists every failure as `clause: message`, one a line.
 */
export function expectPdfA3b(result: PdfAConformance): void {
  const problems: string[] = [];
  if (!result.declared) problems.push('declared: no PDF/A identification in the XMP');
  else if (result.declared.part !== 3 || result.declared.conformance !== 'B') {
    problems.push(
      `declared: PDF/A-${result.declared.part}${result.declared.conformance.toLowerCase()}, not 3b`,
    );
  }
  for (const f of result.failures) problems.push(`${f.clause}: ${f.message}`);
  if (problems.length > 0) {
    throw new Error(`not PDF/A-3b (${problems.length} problems):\n  ${problems.join('\n  ')}`);
  }
}
