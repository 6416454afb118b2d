/**
 * `npm run bench`: two service figures, each as a ratio to a baseline measured in the same run on the same
 * machine, printed as a markdown table and written to `test/bench/results.json`.
 *
 * 1. Upload ingest. A 200 MiB file of random bytes is streamed to a temp dir and read once (page cache hot).
 *    `sha256sum` hashes it twice (best wall time kept). The real server is started as its own process
 *    (`node --import tsx server/src/main.ts`, embedded PGlite, fs storage, 127.0.0.1, free port, temp DATA_DIR);
 *    a user and a session token come from the operator CLI (through the server's admin socket). After a 1 MiB
 *    warm-up upload, the file is uploaded 3 times over loopback: `POST /api/documents/upload`, multipart
 *    (`consent=true`, then `file`) framed by hand, streamed from disk through `http.request` with an exact
 *    Content-Length. Wall time runs from the first byte written to the last byte of the 201 answer, whose
 *    `sha256Hash` must equal sha256sum's (the bench throws otherwise). Ingest ratio = sha256sum time / upload
 *    time (a throughput ratio; goal >= 0.6), best of the 3 runs. Meanwhile the server's `VmRSS`
 *    (`/proc/<pid>/status`) is sampled every 10 ms; growth = peak - RSS just before that upload (goal < 64 MB,
 *    worst of the 3 runs). Server CPU time (`/proc/<pid>/stat`) per upload is reported as a diagnostic.
 * 2. Public verify. `GET /api/public/verify?hash=<uploaded hash>` is loaded with autocannon, 50 connections,
 *    2 s warm-up then 10 s measured; the server is then stopped and a bare Express 5 app (`bare-express.ts`,
 *    own process) answering a JSON body of the same size is loaded the same way. Reported: requests/s
 *    (autocannon's per-second average) and p99 latency (ms, 2xx only, 1 ms resolution) for both, and the ratios
 *    service/bare. Any non-2xx answer (a 429 in particular, should rate limiting appear) is reported loudly.
 * 3. Anchoring (issue 4, `anchoring.ts`): gas/fee per document for batches of 1, 100 and 1,000 on the
 *    devnets, and time from upload to `registered` through a second server process with `ANCHORING=devnet`.
 * 4. Certificates (issue 5, `certificates.ts`): certificate time for a 1-page and a 352-page source, signed and
 *    unsigned, as a ratio to pdf-lib loading and saving the same file in the same run; peak memory.
 *
 * 5. Indicator catalog (issue 7, `catalog.ts`): sync throughput for 10,000 definitions, search latency p50/p95
 *    with the provider's own time apart, recall@5 on the labeled query set.
 *
 * `npm run bench -- certificates` runs part 4 alone, `npm run bench:catalog` part 5 (results printed,
 * `results.json` left as it is).
 *
 * MB means MiB (2^20 bytes) throughout. Every child process and the temp dir are removed at the end, also on
 * failure or Ctrl-C. `BENCH_SERVER_NODE_ARGS` adds Node flags to the server process, e.g.
 * `BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" npm run bench` to profile it.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { type AnchoringResults, benchAnchoring, reportAnchoring } from './anchoring';
import { benchCatalog, type CatalogBenchResults, reportCatalog } from './catalog';
import { benchCertificates, type CertificateResults, reportCertificates } from './certificates';
import {
  type Child,
  freePort,
  type LoadResult,
  loadTest,
  MiB,
  readCpuSeconds,
  readRss,
  readThrough,
  runCommand,
  sampleRss,
  startChild,
  uploadFile,
  writeRandomFile,
} from './lib';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NODE = path.join(ROOT, 'node_modules', '.bin', 'node');
const RESULTS_FILE = path.join(ROOT, 'test', 'bench', 'results.json');

const FILE_BYTES = 200 * MiB;
const WARMUP_UPLOAD_BYTES = 1 * MiB;
const UPLOAD_RUNS = 3;
const SHA256SUM_RUNS = 2;
const RSS_SAMPLE_MS = 10;
const CONNECTIONS = 50;
const LOAD_WARMUP_S = 2;
const LOAD_S = 10;
const SERVER_START_TIMEOUT_MS = 120_000;
const GOALS = { ingestRatio: 0.6, rssGrowthMB: 64 };
const EMAIL = 'bench@example.com';

/** Cleanup steps run in reverse order of registration, once, whatever happened. */
class Cleanup {
  private readonly steps: { label: string; run: () => Promise<void> }[] = [];
  private running: Promise<void> | undefined;

  add(label: string, run: () => Promise<void>): void {
    this.steps.push({ label, run });
  }

  run(): Promise<void> {
    this.running ??= (async () => {
      for (const step of this.steps.reverse()) {
        await step.run().catch((e: unknown) => console.error(`[bench] cleanup "${step.label}" failed:`, e));
      }
    })();
    return this.running;
  }
}

interface UploadRun {
  wallS: number;
  /** Time until the last request byte was handed to the socket. */
  sentS: number;
  ratio: number;
  throughputMBps: number;
  rssBaselineMB: number;
  rssPeakMB: number;
  rssGrowthMB: number;
  rssSamples: number;
  serverCpuS: number;
}

interface Results {
  date: string;
  machine: {
    node: string;
    cpus: number;
    cpuModel: string;
    memoryGB: number;
    /** 1-minute load average before and after the run: other work on the machine skews every figure. */
    loadAverage: { before: number; after: number };
  };
  file: { bytes: number; sha256: string };
  serverStartS: number;
  sha256sum: { runsS: number[]; bestS: number };
  uploads: UploadRun[];
  verify: {
    url: string;
    bodyBytes: number;
    connections: number;
    durationS: number;
    service: LoadResult;
    bare: LoadResult;
    rpsRatio: number;
    p99Ratio: number;
  };
  summary: {
    bestUploadS: number;
    bestIngestRatio: number;
    worstRssGrowthMB: number;
    ingestGoalMet: boolean;
    rssGoalMet: boolean;
    serviceNon2xx: number;
    service429: number;
  };
  /** Issue 4: anchoring cost per batch and latency to `registered` (see `anchoring.ts`). */
  anchoring: AnchoringResults;
  certificates: CertificateResults;
  /** Issue 7: catalog sync throughput, search latency, recall@5 (see `catalog.ts`). */
  catalog: CatalogBenchResults;
}

const mb = (bytes: number) => bytes / MiB;

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, ...extra };
}

/** Runs the operator CLI against the running server (admin socket in DATA_DIR); returns its last stdout line. */
async function operator(env: NodeJS.ProcessEnv, args: string[], all = false): Promise<string> {
  const r = await runCommand(NODE, ['--import', 'tsx', 'server/src/cli/main.ts', ...args], {
    cwd: ROOT,
    env,
  });
  if (r.code !== 0) throw new Error(`notary ${args.join(' ')} failed (${r.code}):\n${r.stderr}${r.stdout}`);
  if (all) return r.stdout;
  const last = r.stdout.trim().split('\n').pop()?.trim();
  if (!last) throw new Error(`notary ${args.join(' ')} printed nothing`);
  return last;
}

async function sha256sum(file: string): Promise<{ hash: string; wallMs: number }> {
  const r = await runCommand('sha256sum', [file], { cwd: ROOT });
  const hash = /^([0-9a-f]{64})\s/.exec(r.stdout)?.[1];
  if (r.code !== 0 || !hash) throw new Error(`sha256sum failed (${r.code}): ${r.stderr}`);
  return { hash, wallMs: r.wallMs };
}

/** Uploads `file` and checks the 201 answer's hash; throws loudly on any mismatch. */
async function checkedUpload(url: string, token: string, file: string, expectedHash: string, server: Child) {
  const outcome = await uploadFile(url, token, file, path.basename(file));
  if (outcome.status !== 201) {
    throw new Error(`upload answered ${outcome.status}: ${outcome.body}\nserver output:\n${server.tail()}`);
  }
  const doc = JSON.parse(outcome.body) as { sha256Hash?: unknown };
  if (doc.sha256Hash !== expectedHash) {
    throw new Error(
      `HASH MISMATCH: server says ${String(doc.sha256Hash)}, sha256sum says ${expectedHash} for ${file}`,
    );
  }
  return outcome;
}

async function load(label: string, url: string): Promise<LoadResult> {
  console.log(`[bench] ${label}: warm-up ${LOAD_WARMUP_S} s, then ${LOAD_S} s at ${CONNECTIONS} connections`);
  await loadTest(url, CONNECTIONS, LOAD_WARMUP_S);
  const r = await loadTest(url, CONNECTIONS, LOAD_S);
  const codes = Object.entries(r.statusCodes)
    .map(([code, n]) => `${code}×${n}`)
    .join(' ');
  console.log(`[bench] ${label}: ${r.rps.toFixed(0)} req/s, p99 ${r.p99} ms, statuses ${codes || 'none'}`);
  if (r.non2xx > 0 || r.errors > 0) {
    console.warn(
      `[bench] WARNING ${label}: ${r.non2xx} non-2xx answers (${codes}), ${r.errors} errors, ${r.timeouts} timeouts` +
        ((r.statusCodes['429'] ?? 0) > 0
          ? ' — RATE LIMITED (429): the rps figure is not the service capacity'
          : ''),
    );
  }
  return r;
}

async function bench(cleanup: Cleanup): Promise<Results> {
  const loadBefore = os.loadavg()[0] ?? 0;
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'notary-bench-'));
  cleanup.add('temp dir', () => rm(tmp, { recursive: true, force: true }));
  const big = path.join(tmp, 'big.bin');
  const small = path.join(tmp, 'small.bin');
  const dataDir = path.join(tmp, 'data');
  await mkdir(dataDir);

  // --- Baseline: sha256sum on a hot page cache --------------------------------------------------------------
  console.log(`[bench] writing ${mb(FILE_BYTES)} MB of random bytes to ${big}`);
  await writeRandomFile(big, FILE_BYTES);
  await writeRandomFile(small, WARMUP_UPLOAD_BYTES);
  const smallHash = createHash('sha256')
    .update(await readFile(small))
    .digest('hex');
  await readThrough(big);
  const shaRuns: number[] = [];
  let bigHash = '';
  for (let i = 0; i < SHA256SUM_RUNS; i++) {
    const r = await sha256sum(big);
    if (bigHash && r.hash !== bigHash) throw new Error('sha256sum gave two different hashes');
    bigHash = r.hash;
    shaRuns.push(r.wallMs / 1000);
  }
  const shaBestS = Math.min(...shaRuns);
  console.log(`[bench] sha256sum: ${shaRuns.map((s) => s.toFixed(3)).join(' s, ')} s (${bigHash})`);

  // --- The service, as its own process ----------------------------------------------------------------------
  const port = await freePort();
  const env = childEnv({
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    ANCHORING: 'off',
    // The bench measures throughput, not the spec's limits (an operator's explicit switch).
    RATE_LIMITS: 'off',
  });
  const extraNodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const startedAt = performance.now();
  const server = startChild('server', NODE, [...extraNodeArgs, '--import', 'tsx', 'server/src/main.ts'], {
    cwd: ROOT,
    env,
  });
  cleanup.add('server', () => server.stop());
  const url = (await server.waitForLine(/\[notary\] listening on (\S+)/, SERVER_START_TIMEOUT_MS))[1] ?? '';
  const serverStartS = (performance.now() - startedAt) / 1000;
  console.log(`[bench] server pid ${server.pid} listening on ${url} after ${serverStartS.toFixed(1)} s`);

  console.log(`[bench] creating ${EMAIL} and a session token with the operator CLI`);
  await operator(env, ['user:create', '--email', EMAIL]);
  const token = await operator(env, ['token', '--email', EMAIL]);

  const clockTicks = Number((await runCommand('getconf', ['CLK_TCK'], { cwd: ROOT })).stdout.trim()) || 100;
  console.log(`[bench] warm-up upload (${mb(WARMUP_UPLOAD_BYTES)} MB)`);
  await checkedUpload(url, token, small, smallHash, server);

  // --- Uploads ----------------------------------------------------------------------------------------------
  const uploads: UploadRun[] = [];
  for (let i = 1; i <= UPLOAD_RUNS; i++) {
    await new Promise((r) => setTimeout(r, 500));
    const baseline = readRss(server.pid);
    const cpuBefore = readCpuSeconds(server.pid, clockTicks);
    const sampler = sampleRss(server.pid, RSS_SAMPLE_MS);
    const outcome = await checkedUpload(url, token, big, bigHash, server).finally(() => sampler.stop());
    const { peak, samples } = sampler.stop();
    const run: UploadRun = {
      wallS: outcome.wallMs / 1000,
      sentS: outcome.sentMs / 1000,
      ratio: shaBestS / (outcome.wallMs / 1000),
      throughputMBps: mb(FILE_BYTES) / (outcome.wallMs / 1000),
      rssBaselineMB: mb(baseline),
      rssPeakMB: mb(peak),
      rssGrowthMB: mb(peak - baseline),
      rssSamples: samples,
      serverCpuS: readCpuSeconds(server.pid, clockTicks) - cpuBefore,
    };
    uploads.push(run);
    console.log(
      `[bench] upload ${i}/${UPLOAD_RUNS}: ${run.wallS.toFixed(3)} s (body sent at ${run.sentS.toFixed(3)} s), ` +
        `ratio ${run.ratio.toFixed(2)}, RSS ${run.rssBaselineMB.toFixed(1)} → ${run.rssPeakMB.toFixed(1)} MB ` +
        `(+${run.rssGrowthMB.toFixed(1)}, ${samples} samples), server CPU ${run.serverCpuS.toFixed(2)} s`,
    );
  }

  // --- Public verify: service, then bare Express ------------------------------------------------------------
  const verifyPath = `/api/public/verify?hash=${bigHash}`;
  const probe = await fetch(`${url}${verifyPath}`);
  const verifyBody = await probe.text();
  if (probe.status !== 200 || !(JSON.parse(verifyBody) as { found?: unknown }).found) {
    throw new Error(`verify probe answered ${probe.status}: ${verifyBody}`);
  }
  const bodyBytes = Buffer.byteLength(verifyBody);
  const service = await load('service verify', `${url}${verifyPath}`);
  await server.stop();

  const barePort = await freePort();
  const bare = startChild('bare', NODE, ['--import', 'tsx', 'test/bench/bare-express.ts'], {
    cwd: ROOT,
    env: childEnv({ HOST: '127.0.0.1', PORT: String(barePort), BARE_BODY: verifyBody }),
  });
  cleanup.add('bare express', () => bare.stop());
  const bareUrl = (await bare.waitForLine(/\[bare\] listening on (\S+)/, 60_000))[1] ?? '';
  const bareProbe = await (await fetch(`${bareUrl}${verifyPath}`)).text();
  if (Buffer.byteLength(bareProbe) !== bodyBytes) {
    throw new Error(`bare body is ${Buffer.byteLength(bareProbe)} bytes, service body ${bodyBytes}`);
  }
  const bareResult = await load('bare express', `${bareUrl}${verifyPath}`);
  await bare.stop();

  const anchoring = await benchAnchoring({
    root: ROOT,
    node: NODE,
    addCleanup: (label, run) => cleanup.add(label, run),
    operator,
    childEnv,
  });

  const bestUploadS = Math.min(...uploads.map((u) => u.wallS));
  const bestIngestRatio = Math.max(...uploads.map((u) => u.ratio));
  const worstRssGrowthMB = Math.max(...uploads.map((u) => u.rssGrowthMB));
  const cpus = os.cpus();
  return {
    date: new Date().toISOString(),
    machine: {
      node: process.version,
      cpus: cpus.length,
      cpuModel: cpus[0]?.model ?? 'unknown',
      memoryGB: Math.round(os.totalmem() / 2 ** 30),
      loadAverage: { before: loadBefore, after: os.loadavg()[0] ?? 0 },
    },
    file: { bytes: FILE_BYTES, sha256: bigHash },
    serverStartS,
    sha256sum: { runsS: shaRuns, bestS: shaBestS },
    uploads,
    verify: {
      url: verifyPath,
      bodyBytes,
      connections: CONNECTIONS,
      durationS: LOAD_S,
      service,
      bare: bareResult,
      rpsRatio: service.rps / bareResult.rps,
      p99Ratio: service.p99 / bareResult.p99,
    },
    summary: {
      bestUploadS,
      bestIngestRatio,
      worstRssGrowthMB,
      ingestGoalMet: bestIngestRatio >= GOALS.ingestRatio,
      rssGoalMet: worstRssGrowthMB < GOALS.rssGrowthMB,
      serviceNon2xx: service.non2xx,
      service429: service.statusCodes['429'] ?? 0,
    },
    anchoring,
    certificates: await benchCertificates({
      root: ROOT,
      node: NODE,
      addCleanup: (label, run) => cleanup.add(label, run),
      childEnv,
    }),
    catalog: await benchCatalog(),
  };
}

function report(r: Results): string {
  const f = (n: number, digits: number) => n.toFixed(digits);
  const mark = (ok: boolean) => (ok ? '✅' : '❌');
  const s = r.summary;
  const v = r.verify;
  const rateNote = s.service429 > 0 ? ` ⚠ ${s.service429}× 429 (rate limited)` : '';
  const lines = [
    `Notary bench, ${r.date}, Node ${r.machine.node}, ${r.machine.cpus} × ${r.machine.cpuModel}, ` +
      `load average ${f(r.machine.loadAverage.before, 2)} → ${f(r.machine.loadAverage.after, 2)}`,
    '',
    '| measure | value | goal |',
    '| --- | --- | --- |',
    `| upload 200 MB time (s), best of ${r.uploads.length} | ${f(s.bestUploadS, 3)} | |`,
    `| sha256sum time (s), best of ${r.sha256sum.runsS.length} | ${f(r.sha256sum.bestS, 3)} | |`,
    `| ingest ratio (sha256sum / upload time) | ${f(s.bestIngestRatio, 2)} | ≥ ${GOALS.ingestRatio} ${mark(s.ingestGoalMet)} |`,
    `| peak RSS growth during upload (MB), worst of ${r.uploads.length} | ${f(s.worstRssGrowthMB, 1)} | < ${GOALS.rssGrowthMB} ${mark(s.rssGoalMet)} |`,
    `| verify rps, ${v.connections} conns (service / bare / ratio) | ${f(v.service.rps, 0)} / ${f(v.bare.rps, 0)} / ${f(v.rpsRatio, 2)}${rateNote} | |`,
    `| verify p99 ms (service / bare / ratio) | ${f(v.service.p99, 0)} / ${f(v.bare.p99, 0)} / ${f(v.p99Ratio, 2)} | |`,
    `| verify non-2xx (service / bare) | ${v.service.non2xx} / ${v.bare.non2xx} | 0 |`,
    '',
    '| upload run | wall (s) | body sent (s) | MB/s | ratio | RSS before (MB) | RSS peak (MB) | growth (MB) | samples | server CPU (s) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...r.uploads.map(
      (u, i) =>
        `| ${i + 1} | ${f(u.wallS, 3)} | ${f(u.sentS, 3)} | ${f(u.throughputMBps, 0)} | ${f(u.ratio, 2)} | ` +
        `${f(u.rssBaselineMB, 1)} | ${f(u.rssPeakMB, 1)} | ${f(u.rssGrowthMB, 1)} | ${u.rssSamples} | ${f(u.serverCpuS, 2)} |`,
    ),
    '',
    `Verify body ${v.bodyBytes} bytes; p50 ms service ${v.service.p50} / bare ${v.bare.p50}; ` +
      `requests service ${v.service.requests} / bare ${v.bare.requests} in ${v.durationS} s; server cold start ${f(r.serverStartS, 1)} s.`,
    '',
    reportAnchoring(r.anchoring),
    '',
    reportCertificates(r.certificates),
    '',
    reportCatalog(r.catalog),
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const cleanup = new Cleanup();
  const onSignal = (signal: NodeJS.Signals) => {
    console.error(`[bench] ${signal}: cleaning up`);
    void cleanup.run().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    if (process.argv[2] === 'certificates') {
      const certificates = await benchCertificates({
        root: ROOT,
        node: NODE,
        addCleanup: (label, run) => cleanup.add(label, run),
        childEnv,
      });
      console.log(`\n${reportCertificates(certificates)}\n`);
      return;
    }
    const results = await bench(cleanup);
    console.log(`\n${report(results)}\n`);
    await writeFile(RESULTS_FILE, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`[bench] results written to ${path.relative(ROOT, RESULTS_FILE)}`);
  } finally {
    await cleanup.run();
  }
}

main().catch((e: unknown) => {
  console.error(`[bench] FAILED: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(1);
});
