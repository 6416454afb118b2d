/**
 * `npm run bench -- capture [--runs N]`: one loopback page captured by the service's capture path against a bare
 * Playwright capture of the same page in the same Chromium (`/usr/bin/chromium`), printed only.
 *
 * The page (`capturePage`): text, 20 PNG images and one section built by a script, from a plain HTTP server on
 * 127.0.0.1 started here. Ours: the service's capturer as `bootstrap.ts` builds it (`createCapturer` with the
 * configuration's capture settings, `CAPTURE_ALLOW_HOSTS=127.0.0.1`; `archivingCapturer` with the WACZ signer of a
 * service without signing certificate, its own key in a temp DATA_DIR): a capture process of its own (as
 * `CAPTURE_USER` when root, else sandboxed), browser start, navigation with scrolling and the wait for the network
 * to settle, screenshot, PDF, WARC, then the provenance summary, the WACZ packing and its signature; as in the
 * service, the next capture's process is started ahead once a capture has run, with its own fresh browser, context
 * and blank page (the bench waits until it is ready before the bare side runs, so that its start is measured
 * against nothing; what that start took is printed as the `ahead:` lines, not part of ours). Bare: launch
 * the same Chromium (`launchChromium`), `page.goto` until `load`, a full-page screenshot, close: the floor of any
 * capture that starts a browser per page. One warm-up of each, then `runs` rounds of ours then bare. Ratio =
 * median of ours / median of bare (goal ≤ 1.5); each stage of ours from the capture's own stage times
 * (`StageTimes`, asked for by the bench only), as median ms and share of ours' median. Throws when a capture
 * misses an image or makes no archive.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { silentLog } from '@notary/platform/log';
import { StageTimes } from '@notary/platform/stage-times';
import { archivingCapturer } from '@notary/server/adapters/capture/service/archive';
import { createCapturer } from '@notary/server/adapters/capture/service/index';
import { captureSoftware, createWaczSigner } from '@notary/server/adapters/capture/service/wacz-signing';
import { CaptureEnv, captureSettings } from '@notary/server/config/capture';
import { CHROMIUM, launchChromium } from '../harness/chromium';
import { solidPng, startSite } from '../harness/web-site';
import { median } from './lib';

/** Default rounds of `npm run bench -- capture`; each side also has one warm-up. */
export const CAPTURE_RUNS = 5;
export const CAPTURE_GOALS = { ratio: 1.5 };
/** Images on the page. */
const IMAGES = 20;

/** Stages of ours in report order; `↳` ones are part of the stage above them (`↳ ↳` of the `↳` one). */
const STAGES = [
  'capture process',
  '↳ process start (what the capture waited for)',
  '↳ browser start (what the capture waited for its browser and page)',
  '↳ navigate',
  '↳ ↳ load (to the load event)',
  '↳ ↳ scroll',
  '↳ ↳ quiet (network settling)',
  '↳ ↳ redirects and headers',
  '↳ screenshot',
  '↳ PDF',
  '↳ HAR and TLS',
  '↳ WARC writing',
  '↳ browser close (beyond the WARC writing)',
  '↳ rest (request, answer, exit)',
  'WACZ packing',
  '↳ provenance',
  '↳ signing',
  'ahead: browser start (before the request, not part of ours)',
  'ahead: new context (fresh profile, HAR recording)',
  'ahead: page open (page, DevTools session, listeners)',
  'ahead: rendering warm-up (screenshot and PDF of the blank page)',
] as const;
const PARTS_OF_PROCESS = [
  'process start',
  'browser start',
  'navigate',
  'screenshot',
  'PDF',
  'HAR and TLS',
  'browser close',
  'WARC writing',
];

export interface CaptureRound {
  oursMs: number;
  bareMs: number;
  /** The bare side's browser launch, part of `bareMs`. */
  bareLaunchMs: number;
  /** Ours' stage times, ms (`STAGES` without the arrows). */
  stages: Record<string, number>;
  waczBytes: number;
  bareScreenshotBytes: number;
}

export interface CaptureResults {
  date: string;
  runs: number;
  /** 1-minute load average before the first capture and after the last. */
  loadBefore: number;
  loadAfter: number;
  chromium: string;
  rounds: CaptureRound[];
  /** Median of ours / median of bare. */
  ratio: number;
  /**
   * The warm-up round, once: ours with no process waiting (the service's first capture after a start, or after
   * its waiting process ended unused) and bare's first launch, ms.
   */
  cold: { oursMs: number; bareMs: number };
}

/** The page both sides capture: text, `IMAGES` images, a section a script builds after parsing. */
function capturePage(): string {
  const paragraphs = Array.from(
    { length: 12 },
    (_, i) =>
      `<p>Parágrafo ${i + 1}: o tabelião lavra a ata notarial do conteúdo desta página, como visto.</p>`,
  ).join('\n');
  const images = Array.from(
    { length: IMAGES },
    (_, i) => `<img src="/img/${i}.png" width="240" height="160" alt="imagem ${i}">`,
  ).join('\n');
  return `<!doctype html><html lang="pt-BR"><head><meta charset="utf-8"><title>Bench capture</title></head>
<body><h1>Página de teste</h1>
${paragraphs}
<div>${images}</div>
<section id="built"></section>
<script>
  const section = document.getElementById('built');
  const table = document.createElement('table');
  for (let i = 0; i < 50; i++) {
    const row = table.insertRow();
    row.insertCell().textContent = 'Linha ' + (i + 1);
    row.insertCell().textContent = String((i * 7919) % 1000);
  }
  section.append(table);
</script>
</body></html>`;
}

/** The page's server: `/` the page, `/img/N.png` an image of its own colour. */
function pageHandler(): http.RequestListener {
  const html = Buffer.from(capturePage());
  const images = Array.from({ length: IMAGES }, (_, i) =>
    solidPng(240, 160, [(i * 37) % 256, (i * 91) % 256, (i * 53) % 256]),
  );
  return (req, res) => {
    const image = /^\/img\/(\d+)\.png$/.exec(req.url ?? '');
    const body = image ? images[Number(image[1])] : req.url === '/' ? html : undefined;
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {
      'Content-Type': image ? 'image/png' : 'text/html; charset=utf-8',
      'Content-Length': body.length,
    });
    res.end(body);
  };
}

/**
 * Runs the comparison (`args`: `--runs N`); every server, browser and temp directory is registered with
 * `addCleanup`. @throws Error when a capture fails, misses an image or makes no archive.
 */
export async function benchCapture(options: {
  addCleanup: (label: string, run: () => Promise<void>) => void;
  args: string[];
}): Promise<CaptureResults> {
  const runsArg = options.args.indexOf('--runs');
  const runs = runsArg >= 0 ? Number(options.args[runsArg + 1]) : CAPTURE_RUNS;
  if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs wants a positive integer');
  const loadBefore = os.loadavg()[0] ?? 0;
  const site = await startSite(pageHandler());
  options.addCleanup('capture page server', () => site.close());
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-bench-capture-'));
  options.addCleanup('capture data dir', () => rm(dataDir, { recursive: true, force: true }));
  const url = new URL(`${site.origin}/`);

  const settings = captureSettings(
    CaptureEnv.parse({ CHROMIUM_PATH: CHROMIUM, CAPTURE_ALLOW_HOSTS: '127.0.0.1' }),
  );
  const software = captureSoftware('Notary');
  const source = await createCapturer(settings, {
    publicUrl: 'http://127.0.0.1',
    serviceName: 'Notary',
    log: silentLog,
    production: false,
    hiddenPaths: [dataDir],
  });
  options.addCleanup('capture process started ahead', () => source.close());
  const signer = await createWaczSigner({
    signer: undefined,
    tsa: undefined,
    tsaUrl: undefined,
    dataDir,
    software,
  });

  const images = (from: number) => site.requests.slice(from).filter((r) => r.startsWith('/img/')).length;
  const ours = async (): Promise<Pick<CaptureRound, 'oursMs' | 'stages' | 'waczBytes'>> => {
    const times = new StageTimes();
    const capturer = archivingCapturer(source, signer, { software, log: silentLog, times });
    const from = site.requests.length;
    const started = performance.now();
    const capture = await capturer.capture(url);
    const oursMs = performance.now() - started;
    await capture.dispose();
    // The next capture's process, started ahead, loads while nothing is measured.
    await source.ready();
    if (images(from) < IMAGES) throw new Error(`our capture fetched ${images(from)} of ${IMAGES} images`);
    if (capture.waczBytes <= 0) throw new Error('our capture made no archive');
    return { oursMs, stages: times.entries(), waczBytes: capture.waczBytes };
  };
  const bare = async (): Promise<Pick<CaptureRound, 'bareMs' | 'bareLaunchMs' | 'bareScreenshotBytes'>> => {
    const from = site.requests.length;
    const started = performance.now();
    const browser = await launchChromium();
    const bareLaunchMs = performance.now() - started;
    try {
      const page = await browser.newPage();
      await page.goto(url.href, { waitUntil: 'load' });
      const png = await page.screenshot({ fullPage: true });
      await browser.close();
      const bareMs = performance.now() - started;
      if (images(from) < IMAGES)
        throw new Error(`the bare capture fetched ${images(from)} of ${IMAGES} images`);
      return { bareMs, bareLaunchMs, bareScreenshotBytes: png.length };
    } finally {
      await browser.close().catch(() => undefined);
    }
  };

  console.log(`[bench] capture ${url.href}: one warm-up each, then ${runs} rounds`);
  const cold = { oursMs: (await ours()).oursMs, bareMs: (await bare()).bareMs };
  const rounds: CaptureRound[] = [];
  for (let i = 0; i < runs; i++) {
    const o = await ours();
    const b = await bare();
    rounds.push({ ...o, ...b });
    console.log(
      `[bench] capture round ${i + 1}: ours ${o.oursMs.toFixed(0)} ms, bare ${b.bareMs.toFixed(0)} ms`,
    );
  }
  return {
    date: new Date().toISOString(),
    runs,
    loadBefore,
    loadAfter: os.loadavg()[0] ?? 0,
    chromium: CHROMIUM,
    rounds,
    ratio: median(rounds.map((r) => r.oursMs)) / median(rounds.map((r) => r.bareMs)),
    cold,
  };
}

/** A stage's time in one round, ms; the process's rest is what its own stages leave of it. */
function stageMs(round: CaptureRound, stage: (typeof STAGES)[number]): number {
  if (stage === '↳ rest (request, answer, exit)') {
    const parts = PARTS_OF_PROCESS.reduce((sum, s) => sum + (round.stages[s] ?? 0), 0);
    return (round.stages['capture process'] ?? 0) - parts;
  }
  return round.stages[stage.replace(/^(↳ )+/, '').replace(/ \(.*\)$/, '')] ?? 0;
}

/** The comparison and ours' stages as markdown tables, with the machine's load beside them. */
export function reportCapture(r: CaptureResults): string {
  const f = (n: number, d: number) => n.toFixed(d);
  const spread = (values: number[]) => `${f(Math.min(...values), 0)}–${f(Math.max(...values), 0)}`;
  const ours = r.rounds.map((x) => x.oursMs);
  const bare = r.rounds.map((x) => x.bareMs);
  const oursMedian = median(ours);
  const roundRatios = r.rounds.map((x) => x.oursMs / x.bareMs);
  return [
    `Capture, ${r.date}, loopback page (text, ${IMAGES} images, a script-built section), ${r.chromium}, ` +
      `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown CPU'}, load average ${f(r.loadBefore, 2)} before, ` +
      `${f(r.loadAfter, 2)} after`,
    '',
    `| capture (median of ${r.runs}) | time (ms) | min–max (ms) | ratio to bare | output (KB) |`,
    '| --- | --- | --- | --- | --- |',
    `| ours: capture process, WACZ, provenance, signature | ${f(oursMedian, 0)} | ${spread(ours)} | ` +
      `${f(r.ratio, 2)} | ${f(median(r.rounds.map((x) => x.waczBytes)) / 1024, 0)} (WACZ) |`,
    `| bare Playwright: launch, goto, full-page screenshot | ${f(median(bare), 0)} | ${spread(bare)} | 1 | ` +
      `${f(median(r.rounds.map((x) => x.bareScreenshotBytes)) / 1024, 0)} (PNG) |`,
    `| ↳ bare: browser launch | ${f(median(r.rounds.map((x) => x.bareLaunchMs)), 0)} | ` +
      `${spread(r.rounds.map((x) => x.bareLaunchMs))} |  |  |`,
    `| ours, cold: no process waiting (first capture after a start or a pause), the warm-up run | ` +
      `${f(r.cold.oursMs, 0)} | | ${f(r.cold.oursMs / median(bare), 2)} | |`,
    `| bare, its first launch, the warm-up run | ${f(r.cold.bareMs, 0)} | | | |`,
    '',
    `| stage of ours, median of ${r.runs} | ms | min–max (ms) | share of ours |`,
    '| --- | --- | --- | --- |',
    ...STAGES.map((stage) => {
      const values = r.rounds.map((x) => stageMs(x, stage));
      // What was done before the request is no share of ours.
      const share = stage.startsWith('ahead:') ? '' : `${f((100 * median(values)) / oursMedian, 0)} %`;
      return `| ${stage} | ${f(median(values), 0)} | ${spread(values)} | ${share} |`;
    }),
    '',
    `Capture ratio (ours / bare, medians) ${f(r.ratio, 2)}, per round ${f(Math.min(...roundRatios), 2)}–` +
      `${f(Math.max(...roundRatios), 2)} (goal ≤ ${CAPTURE_GOALS.ratio} ${r.ratio <= CAPTURE_GOALS.ratio ? '✅' : '❌'}).`,
  ].join('\n');
}
