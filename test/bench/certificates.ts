/**
 * Certificate part of `npm run bench`. For a 1-page source (`alphatrans.pdf`, 17 KB) and a 352-page one
 * (`freeculture.pdf`, 2.6 MB) from `../shared/fixtures/pdfs`, each case runs in its own process
 * (`certificate-case.ts`: one warm-up, then `RUNS` timed runs, best kept, peak RSS from `maxRSS`):
 * - baseline: pdf-lib `PDFDocument.load` + `save` of the same bytes, measured in the same run;
 * - unsigned: `renderCertificate` (every page stamped, certificate appended as an incremental update);
 * - signed: the same plus `signPdf` (PAdES B-B: CMS built with pkijs, RSA-2048 key from a PKCS#12 made by the
 *   test PKI; no TSA, so that the figure is our own work, not a network round trip).
 * Ratio = case time / baseline time. Goal, for the 352-page source only: at most 2, i.e. stamping every page and
 * appending the certificate costs at most about twice what pdf-lib alone pays to load and save the file. For a
 * 1-page source the certificate itself (layout, QR code, three font subsets: a fixed ~50 ms) dominates and the
 * ratio to a ~2 ms load+save says little; its absolute time is the figure to watch. Peak memory is the case
 * process's maximum RSS (Node and the modules included; the baseline row shows that floor).
 */
import path from 'node:path';
import { createTestPki } from '../harness/pki';
import { runCommand } from './lib';

const RUNS = 5;
const SOURCES = [
  { label: '1 page', file: 'alphatrans.pdf' },
  { label: '352 pages', file: 'freeculture.pdf' },
];
const MODES = ['baseline', 'unsigned', 'signed'] as const;
export const CERTIFICATE_GOALS = { ratio: 2 };

export interface CertificateCase {
  source: string;
  pages: string;
  mode: (typeof MODES)[number];
  bestMs: number;
  medianMs: number;
  maxRssMB: number;
  outputBytes: number;
  layout: string;
  /** bestMs / the baseline's bestMs for the same source (1 for the baseline itself). */
  ratio: number;
}

export interface CertificateResults {
  runs: number;
  cases: CertificateCase[];
  summary: { worstRatio: number; ratioGoalMet: boolean; peakRssMB: number };
}

/** Runs every (source, mode) case; throws when a case fails. */
export async function benchCertificates(options: {
  root: string;
  node: string;
  addCleanup: (label: string, run: () => Promise<void>) => void;
  childEnv: (extra: Record<string, string>) => NodeJS.ProcessEnv;
}): Promise<CertificateResults> {
  const pki = await createTestPki();
  options.addCleanup('test pki', () => pki.dispose());
  const fixtures = path.resolve(options.root, '../shared/fixtures/pdfs');
  const cases: CertificateCase[] = [];
  for (const source of SOURCES) {
    let baselineMs = 0;
    for (const mode of MODES) {
      console.log(`[bench] certificate ${source.file} ${mode}`);
      const r = await runCommand(
        options.node,
        [
          '--import',
          'tsx',
          'test/bench/certificate-case.ts',
          mode,
          path.join(fixtures, source.file),
          String(RUNS),
        ],
        {
          cwd: options.root,
          env: options.childEnv({ BENCH_P12: pki.rsa.p12Path, BENCH_P12_PASSWORD: pki.p12Password }),
          timeoutMs: 300_000,
        },
      );
      const line = r.stdout.trim().split('\n').pop() ?? '';
      if (r.code !== 0 || !line.startsWith('{')) {
        throw new Error(`certificate case ${source.file} ${mode} failed (${r.code}):\n${r.stderr}`);
      }
      const m = JSON.parse(line) as Omit<CertificateCase, 'source' | 'pages' | 'mode' | 'ratio'>;
      if (mode === 'baseline') baselineMs = m.bestMs;
      cases.push({ ...m, source: source.file, pages: source.label, mode, ratio: m.bestMs / baselineMs });
    }
  }
  const worstRatio = Math.max(
    ...cases.filter((c) => c.mode !== 'baseline' && c.source === 'freeculture.pdf').map((c) => c.ratio),
  );
  return {
    runs: RUNS,
    cases,
    summary: {
      worstRatio,
      ratioGoalMet: worstRatio <= CERTIFICATE_GOALS.ratio,
      peakRssMB: Math.max(...cases.map((c) => c.maxRssMB)),
    },
  };
}

export function reportCertificates(r: CertificateResults): string {
  const f = (n: number, d: number) => n.toFixed(d);
  return [
    `| certificate (best of ${r.runs}) | source | time (ms) | ratio to pdf-lib load+save | peak RSS (MB) | output (KB) | layout |`,
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...r.cases.map(
      (c) =>
        `| ${c.mode === 'baseline' ? 'pdf-lib load+save' : c.mode} | ${c.source} (${c.pages}) | ${f(c.bestMs, 0)} | ` +
        `${c.mode === 'baseline' ? '1' : f(c.ratio, 2)} | ${f(c.maxRssMB, 0)} | ${f(c.outputBytes / 1024, 0)} | ${c.layout} |`,
    ),
    '',
    `Worst certificate ratio on the 352-page source ${f(r.summary.worstRatio, 2)} ` +
      `(goal ≤ ${CERTIFICATE_GOALS.ratio} ${r.summary.ratioGoalMet ? '✅' : '❌'}); on 1 page the fixed cost of the certificate dominates.`,
  ].join('\n');
}
