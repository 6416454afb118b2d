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
import { stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createTestPki } from '../harness/pki';
import { startRevocationPki } from '../harness/revocation-pki';
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

const LTA_MODES = [
  { mode: 'lta-sign', label: 'ours: signing stage (signAtLevel)' },
  { mode: 'libpdf-lta', label: '@libpdf/core: load + sign B-LTA' },
  { mode: 'lta-whole', label: 'ours: whole certificate (render + sign)' },
] as const;
/** Default timed runs per case of `npm run bench -- certificate`; each case also has one warm-up run. */
export const LTA_RUNS = 5;
/** `tracemonkey.pdf`: a 1 MB, 14-page paper. */
export const LTA_SOURCE = 'tracemonkey.pdf';
export const LTA_GOALS = { signingRatio: 1 };

export interface LtaCase {
  mode: (typeof LTA_MODES)[number]['mode'];
  label: string;
  medianMs: number;
  minMs: number;
  maxMs: number;
  /** Median CPU time per certificate of the case process, all threads (the responders' excluded). */
  cpuMedianMs: number;
  outputBytes: number;
  maxRssMB: number;
  /** 1-minute load average right after the case. */
  loadAverage: number;
  /** Requests to the loopback responders per certificate (warm-up included in the average). */
  requests: { ocsp: number; crl: number; caIssuers: number; tsa: number };
}

export interface LtaResults {
  date: string;
  source: { file: string; bytes: number };
  runs: number;
  /** 1-minute load average before the first case. */
  loadBefore: number;
  cases: LtaCase[];
  /** Our signing stage's median / @libpdf/core's median (goal ≤ 1). */
  signingRatio: number;
}

/**
 * `npm run bench -- certificate [--runs N] [--pdf FILE]`: a B-LTA certificate of the same PDF, ours against
 * `@libpdf/core`, both with the same loopback TSA (`openssl ts`) and OCSP responders (`openssl ocsp`) of the
 * revocation test PKI (`test/harness/revocation-pki.ts`), whose signer certificate names them in its AIA.
 * Each mode runs in its own process (`certificate-case.ts`: one warm-up, then `runs` timed runs): median,
 * min–max, output size, peak RSS. Throws when a case fails or either side falls short of B-LTA.
 */
export async function benchCertificateLta(options: {
  root: string;
  node: string;
  addCleanup: (label: string, run: () => Promise<void>) => void;
  childEnv: (extra: Record<string, string>) => NodeJS.ProcessEnv;
  args: string[];
}): Promise<LtaResults> {
  const runsArg = options.args.indexOf('--runs');
  const pdfArg = options.args.indexOf('--pdf');
  const runs = runsArg >= 0 ? Number(options.args[runsArg + 1]) : LTA_RUNS;
  if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs wants a positive integer');
  const file =
    pdfArg >= 0
      ? path.resolve(options.args[pdfArg + 1] ?? '')
      : path.resolve(options.root, '../shared/fixtures/pdfs', LTA_SOURCE);
  const loadBefore = os.loadavg()[0] ?? 0;
  const pki = await startRevocationPki();
  options.addCleanup('revocation pki', () => pki.stop());
  // Both sides read the same PKCS#12: key, signer, intermediate and root.
  const p12Path = path.join(pki.dir, 'bench-signer.p12');
  const password = 'bench';
  const made = await runCommand(
    'openssl',
    ['pkcs12', '-export', '-inkey', pki.signer.keyPath, '-in', pki.signer.chainPath, '-out', p12Path].concat([
      '-passout',
      `pass:${password}`,
    ]),
    { cwd: options.root },
  );
  if (made.code !== 0) throw new Error(`openssl pkcs12 -export failed: ${made.stderr}`);
  const cases: LtaCase[] = [];
  for (const { mode, label } of LTA_MODES) {
    console.log(`[bench] certificate B-LTA ${path.basename(file)} ${mode} (${runs} runs)`);
    const before = { ...pki.requests };
    const r = await runCommand(
      options.node,
      [...caseNodeArgs(), '--import', 'tsx', 'test/bench/certificate-case.ts', mode, file, String(runs)],
      {
        cwd: options.root,
        env: options.childEnv({
          BENCH_P12: p12Path,
          BENCH_P12_PASSWORD: password,
          BENCH_TSA_URL: pki.tsaUrl,
          BENCH_TSA_ROOT: pki.root.certPath,
          BENCH_REVOCATION_ALLOW_HOSTS: pki.allowHosts,
        }),
        timeoutMs: 600_000,
      },
    );
    const line = r.stdout.trim().split('\n').pop() ?? '';
    if (r.code !== 0 || !line.startsWith('{')) {
      throw new Error(`certificate case ${mode} failed (${r.code}):\n${r.stderr}${r.stdout.slice(-2000)}`);
    }
    const m = JSON.parse(line) as {
      medianMs: number;
      timesMs: number[];
      cpuMedianMs: number;
      maxRssMB: number;
      outputBytes: number;
    };
    cases.push({
      mode,
      label,
      medianMs: m.medianMs,
      minMs: Math.min(...m.timesMs),
      maxMs: Math.max(...m.timesMs),
      cpuMedianMs: m.cpuMedianMs,
      outputBytes: m.outputBytes,
      maxRssMB: m.maxRssMB,
      loadAverage: os.loadavg()[0] ?? 0,
      requests: {
        ocsp: (pki.requests.ocsp - before.ocsp) / (runs + 1),
        crl: (pki.requests.crl - before.crl) / (runs + 1),
        caIssuers: (pki.requests.caIssuers - before.caIssuers) / (runs + 1),
        tsa: (pki.requests.tsa - before.tsa) / (runs + 1),
      },
    });
  }
  const median = (mode: LtaCase['mode']) => cases.find((c) => c.mode === mode)?.medianMs ?? Number.NaN;
  return {
    date: new Date().toISOString(),
    source: { file: path.basename(file), bytes: (await stat(file)).size },
    runs,
    loadBefore,
    cases,
    signingRatio: median('lta-sign') / median('libpdf-lta'),
  };
}

/**
 * Node flags for each case process from `BENCH_CASE_NODE_ARGS`, e.g.
 * `BENCH_CASE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof"` to profile where each side spends.
 */
function caseNodeArgs(): string[] {
  return (process.env.BENCH_CASE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
}

/** The B-LTA comparison as a markdown table, with the machine's load beside it. */
export function reportCertificateLta(r: LtaResults): string {
  const f = (n: number, d: number) => n.toFixed(d);
  const libpdf = r.cases.find((c) => c.mode === 'libpdf-lta')?.medianMs ?? Number.NaN;
  const libpdfCpu = r.cases.find((c) => c.mode === 'libpdf-lta')?.cpuMedianMs ?? Number.NaN;
  return [
    `Certificate B-LTA, ${r.date}, ${r.source.file} (${f(r.source.bytes / 1024, 0)} KB), ${os.cpus().length} × ` +
      `${os.cpus()[0]?.model ?? 'unknown CPU'}, load average ${f(r.loadBefore, 2)} before`,
    '',
    `| B-LTA (median of ${r.runs}) | time (ms) | min–max (ms) | ratio to @libpdf/core | CPU (ms) | CPU ratio | output (KB) | peak RSS (MB) | requests OCSP / CRL / CA / TSA | load avg after |`,
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...r.cases.map(
      (c) =>
        `| ${c.label} | ${f(c.medianMs, 0)} | ${f(c.minMs, 0)}–${f(c.maxMs, 0)} | ${f(c.medianMs / libpdf, 2)} | ` +
        `${f(c.cpuMedianMs, 0)} | ${f(c.cpuMedianMs / libpdfCpu, 2)} | ` +
        `${f(c.outputBytes / 1024, 0)} | ${f(c.maxRssMB, 0)} | ` +
        `${[c.requests.ocsp, c.requests.crl, c.requests.caIssuers, c.requests.tsa].map((n) => f(n, 1)).join(' / ')} | ` +
        `${f(c.loadAverage, 2)} |`,
    ),
    '',
    `Signing stage ratio (ours / @libpdf/core) ${f(r.signingRatio, 2)} (goal ≤ ${LTA_GOALS.signingRatio} ` +
      `${r.signingRatio <= LTA_GOALS.signingRatio ? '✅' : '❌'}).`,
  ].join('\n');
}
