import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR } from '../fixtures';
import {
  checkPdfA,
  checkPdfAFiles,
  expectPdfA3b,
  PDFA_CHECKED_CLAUSES,
  type PdfAConformance,
} from './conformance.testing';

/**
 * The independent PDF/A-3b check, tried against samples built without the product's code (make_samples.py,
 * pikepdf only): the good sample passes, each broken sample fails with exactly the clauses it breaks, and real
 * non-PDF/A files (including broken and encrypted ones) give failures, never a crash.
 */

const PYTHON = '/usr/bin/python3';
const ALL = PDFA_CHECKED_CLAUSES.map((c) => c.id);

/** Sample name -> the exact set of clauses it must fail. */
const BROKEN: Record<string, string[]> = {
  'header-no-binary-comment': ['6.1.2'],
  'data-after-eof': ['6.1.3'],
  'update-without-id': ['6.1.3'],
  encrypted: ['6.1.3'],
  'info-title-differs': ['6.1.5'],
  'info-date-differs': ['6.1.5'],
  'stream-length-wrong': ['6.1.4'],
  'stream-external-file': ['6.1.7.1'],
  'lzw-stream': ['6.1.7.2'],
  'docmdp-p1-then-updated': ['6.1.12'],
  'perms-extra-key': ['6.1.12'],
  'no-output-intent': ['6.2.3', '6.2.4.3'],
  'icc-n-mismatch': ['6.2.3'],
  'two-profiles': ['6.2.3'],
  'cmyk-with-rgb-intent': ['6.2.4.3'],
  'cmyk-image-in-form': ['6.2.4.3'],
  'image-interpolate': ['6.2.8'],
  'reference-xobject': ['6.2.9'],
  'transparency-without-intent': ['6.2.3', '6.2.4.3', '6.2.10'],
  'blend-mode-unknown': ['6.2.10'],
  'font-not-embedded': ['6.2.11.4.1'],
  'annotation-font-not-embedded': ['6.2.11.4.1'],
  'annotation-hidden': ['6.3.2'],
  'annotation-no-flags': ['6.3.2'],
  'annotation-no-appearance': ['6.3.3'],
  'need-appearances': ['6.4.1'],
  'signed-byterange-short': ['6.4.3'],
  'signed-gap-without-brackets': ['6.4.3'],
  'javascript-openaction': ['6.5.1'],
  'javascript-name-tree': ['6.5.1'],
  'launch-action-on-link': ['6.5.1'],
  'page-aa': ['6.5.2'],
  'no-metadata': ['6.6.2.1'],
  'update-drops-metadata': ['6.6.2.1'],
  'metadata-filtered': ['6.6.2.1'],
  'xmp-encoding-attribute': ['6.6.2.1'],
  'declares-pdfa2': ['6.6.4'],
  'no-afrelationship': ['6.8'],
  'no-uf': ['6.8'],
  'no-moddate': ['6.8'],
  'no-mime-subtype': ['6.8'],
  'not-in-af': ['6.8'],
};

function clauses(r: PdfAConformance): string[] {
  return [...new Set(r.failures.map((f) => f.clause))].sort();
}

describe('independent PDF/A-3b check (qpdf + pikepdf)', () => {
  let dir: string;
  const results = new Map<string, PdfAConformance>();
  const sample = (name: string) => path.join(dir, `${name}.pdf`);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'pdfa-samples-'));
    await promisify(execFile)(PYTHON, [path.join(import.meta.dirname, 'make_samples.py'), dir]);
    const names = [
      'good',
      'signed',
      'signed-then-updated',
      'docmdp-p2-then-updated',
      'info-date-same-instant',
      'encrypted-user-password',
      ...Object.keys(BROKEN),
    ];
    // Two checker processes (one per core) rather than one per file: the suite stays a few seconds.
    const half = Math.ceil(names.length / 2);
    const parts = [names.slice(0, half), names.slice(half)];
    const reports = await Promise.all(parts.map((p) => checkPdfAFiles(p.map(sample))));
    parts.flat().forEach((n, i) => {
      results.set(n, reports.flat()[i] as PdfAConformance);
    });
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const result = (name: string): PdfAConformance => {
    const r = results.get(name);
    if (!r) throw new Error(`no result for ${name}`);
    return r;
  };

  it('passes the good sample, declared 3b, with every listed clause checked', () => {
    const r = result('good');
    expect(r.declared).toEqual({ part: 3, conformance: 'B' });
    expect(r.failures).toEqual([]);
    expect(r.checked).toEqual(ALL);
    expect(() => expectPdfA3b(r)).not.toThrow();
  });

  it('has a broken sample for every clause it claims to check', () => {
    const broken = new Set(Object.values(BROKEN).flat());
    expect(ALL.filter((id) => !broken.has(id))).toEqual([]);
  });

  it('lists the same clauses and descriptions, in the same order, as the script', async () => {
    const { stdout } = await promisify(execFile)(
      PYTHON,
      ['-c', 'import json, pdfa_check; print(json.dumps(pdfa_check.CLAUSES))'],
      { cwd: import.meta.dirname },
    );
    const table = JSON.parse(stdout) as Record<string, string>;
    expect(Object.entries(table).map(([id, description]) => ({ id, description }))).toEqual(
      PDFA_CHECKED_CLAUSES,
    );
  });

  it('checks the same result whether given bytes or a path', async () => {
    const bytes = new Uint8Array(await readFile(sample('font-not-embedded')));
    expect(await checkPdfA(bytes)).toEqual(result('font-not-embedded'));
  });

  it.each(Object.entries(BROKEN))('fails %s with exactly %j', (name, expected) => {
    const r = result(name);
    expect(clauses(r), JSON.stringify(r.failures, null, 1)).toEqual([...expected].sort());
    expect(() => expectPdfA3b(r)).toThrow(expected[0]);
  });

  it('reports what a non-3b file declares', () => {
    expect(result('declares-pdfa2').declared).toEqual({ part: 2, conformance: 'B' });
    expect(() => expectPdfA3b(result('declares-pdfa2'))).toThrow(/PDF\/A-2b, not 3b/);
    expect(result('no-metadata').declared).toBeNull();
  });

  it('compares Info and XMP dates as instants, not as text', () => {
    // 15:00Z in the Info dictionary is 12:00-03:00 in the XMP: the same instant.
    expect(result('info-date-same-instant').failures).toEqual([]);
  });

  it('accepts a signature whose ByteRange ends at its revision, and notes later updates', () => {
    expect(result('signed').failures).toEqual([]);
    expect(result('signed').notes).toEqual([]);
    const updated = result('signed-then-updated');
    expect(updated.failures).toEqual([]);
    expect(updated.notes).toHaveLength(1);
    expect(updated.notes[0]?.message).toMatch(/\d+ bytes of later updates follow/);
    // DocMDP P=2 allows later form-filling and signing revisions; P=1 (above) does not.
    expect(result('docmdp-p2-then-updated').failures).toEqual([]);
  });

  it('reports a password-protected file as failures after the byte-level clauses', () => {
    const r = result('encrypted-user-password');
    expect(clauses(r)).toContain('6.1.3');
    expect(r.checked).toEqual(['6.1.2', '6.1.3', '6.1.4']);
    expect(r.declared).toBeNull();
  });

  it('does not pass non-PDF/A fixtures, broken and encrypted ones included, and does not crash', async () => {
    const names = [
      'tracemonkey.pdf',
      'attachment.pdf',
      'alphatrans.pdf',
      'encrypted-attachment.pdf',
      'empty_protected.pdf',
      'Pages-tree-refs.pdf',
      'poppler-742-0-fuzzed.pdf',
      'xref_command_missing.pdf',
    ];
    const reports = await checkPdfAFiles(names.map((n) => path.join(FIXTURES_DIR, 'pdfs', n)));
    reports.forEach((r, i) => {
      const label = `${names[i]}: ${JSON.stringify(r.failures.slice(0, 3))}`;
      expect(r.declared, label).toBeNull();
      expect(r.failures.length, label).toBeGreaterThan(0);
      expect(r.checked, label).toEqual(expect.arrayContaining(['6.1.2', '6.1.3', '6.1.4']));
      expect(() => expectPdfA3b(r), label).toThrow(/not PDF\/A-3b/);
    });
  });

  it('rejects a path that does not exist instead of reporting it as a non-conforming PDF', async () => {
    await expect(checkPdfA(path.join(dir, 'missing.pdf'))).rejects.toThrow(/ENOENT/);
  });

  it('names the real faults of a signed fixture and a PDF/A-2b one', async () => {
    const signed = await checkPdfA(path.join(FIXTURES_DIR, 'pdfs', 'signed_verified.pdf'));
    expect(signed.failures).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ clause: '6.4.3', message: expect.stringMatching(/angle brackets/) }),
        expect.objectContaining({ clause: '6.2.11.4.1', message: expect.stringMatching(/Helvetica/) }),
      ]),
    );
    const pdfa2 = await checkPdfA(path.join(FIXTURES_DIR, 'pdfs', 'issue13242.pdf'));
    expect(pdfa2.declared).toEqual({ part: 2, conformance: 'B' });
    expect(clauses(pdfa2)).toEqual(['6.6.4']);
  });
});
