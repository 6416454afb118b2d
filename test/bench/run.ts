/**
 * `npm run bench`: service figures, each as a ratio to a baseline measured in the same run on the same
 * machine, printed as a markdown table and written to `test/bench/results.json`. `npm run bench -- http` runs
 * parts 1 and 2 alone (printed, `results.json` left as it is).
 *
 * 1. Upload ingest. A 200 MiB file of random bytes is streamed to a temp dir and read once (page
 *    cache hot); `sha256sum` and `openssl dgst -sha256` hash it once each (diagnostics only: their speed
 *    depends on the CPU's SHA extensions, not on the service). The real server is built (`npm run build:server`)
 *    and started as its own process as operators run it (`npm run start:production`'s command,
 *    `node --max-semi-space-size=16 --heap-growing-percent=100 server/dist/main.mjs` with its malloc settings, without
 *    its `NODE_ENV=production`, which refuses the bench's `RATE_LIMITS=off`; embedded PGlite, fs storage, 127.0.0.1, free port, temp DATA_DIR); a user and a session token come from the operator CLI (through the
 *    server's admin socket). The baseline is `receiver.ts`, its own process: busboy, SHA-256 of the file part,
 *    write, fsync, the hash as JSON, nothing else. The same client, `curl -F` (multipart `consent=true` then
 *    `file`, streamed from disk, exact Content-Length, no `Expect: 100-continue`), uploads the file to the
 *    receiver and to `POST /api/documents/upload`, alternately, 5 times each after a 1 MiB warm-up each: the
 *    two targets share the machine's noise. Time = curl's `time_total`; every answer's hash must equal
 *    sha256sum's (the bench throws otherwise). Ingest ratio = median over the rounds of receiver time /
 *    service time in the same round, with its spread (goal >= 0.95). The server runs with `SERVER_TIMING=on`:
 *    each answer's `Server-Timing` gives a line per upload stage (median, min–max, share of the upload).
 *    `npm run bench -- ingest [--runs N] [--mb N]` runs this part alone (printed only). During each service upload the server's `VmRSS` (`/proc/<pid>/status`) is sampled every 10 ms;
 *    growth = peak - RSS just before that upload (goal < 64 MB, worst run). Diagnostics: CPU time of the
 *    receiver and of the server per upload (`/proc/<pid>/stat`), and the bench's own Node client
 *    (`http.request`) to the receiver, to show which client is faster.
 * 2. Public verify. `GET /api/public/verify?hash=` at 50 connections with autocannon (1 s warm-up,
 *    then 10 s measured) against the service (positive: the uploaded file's hash, cached; negative: a random
 *    hash, its unknown answer kept 10 s by the same cache, so read from the database once per 10 s) and a bare Express 5 app (`bare-express.ts`, own
 *    process under plain Node, no tsx) answering the positive body, same size. Two rounds (`--runs N`: N), each
 *    service positive, bare, service negative, their 10 s split into 5 slices of 2 s run interleaved back and
 *    forth (`interleavedLoad`: the shared host's speed drifts over tens of seconds). Reported, each as the
 *    median over the rounds: requests/s (requests over the measured time), p99 latency (ms, 2xx only, 1 ms
 *    resolution, the median of the slices'), server CPU µs per request
 *    (less sensitive to other load than requests/s), and the ratios service / bare within each round with their
 *    spread (goals on the median ratios: rps >= 0.9, p99 <= 1.2x); a line per round with the 1-minute load
 *    average after each run. Any non-2xx answer (a 429 in particular, should rate limiting appear) is reported
 *    loudly.
 * 3. Anchoring (`anchoring.ts`): gas/fee per document for batches of 1, 100 and 1,000 on the
 *    devnets, and time from upload to `registered` through a second server process with `ANCHORING=devnet`.
 * 4. Certificates (`certificates.ts`): certificate time for a 1-page and a 352-page source, signed and
 *    unsigned, as a ratio to pdf-lib loading and saving the same file in the same run; peak memory.
 *
 * 5. Indicator catalog (`catalog.ts`): sync throughput for 10,000 definitions, search latency p50/p95
 *    with the provider's own time apart, recall@5 on the labeled query set.
 * 6. Memory and start-up (`idle.ts`): `npm start` on the embedded defaults, time to `/health` ok and
 *    idle RSS/PSS of its whole process tree, with each part (PGlite, the devnets, the modules) measured alone;
 *    then the production shape (the built service, PostgreSQL, S3, configured chains on loopback stand-ins).
 *    Alone: `npm run bench -- idle [--starts-only]` (results printed, `results.json` left as it is;
 *    `--starts-only`: `npm start`'s two starts alone).
 *
 * `npm run bench -- verify [--runs N] [--seconds S]`: part 2 with a 1 MiB file uploaded once in place of part 1's
 * rounds (printed only; S: each measured run's length, default 10); `npm run bench -- http [--runs N] [--seconds S]
 * [--mb M] [--uploads U]` parts 1 and 2 on one service (N: part 2's rounds; U rounds of M MB in part 1).
 *
 * `npm run bench -- tlog [--leaves N]` (`tlog.ts`): the transparency log at 1,000,000 leaves (integration, proofs,
 * tiles, one more entry); printed, `results.json` left as it is.
 *
 * `npm run bench -- anchor-cost` (`anchor-cost.ts`): what one anchoring batch costs on a real network (EVM gas,
 * Stacks bytes and API requests), measured on the devnets; printed, `results.json` left as it is.
 *
 * `npm run bench -- seed --documents N --email E [--org NAME] [--objects]` (`seed.ts`): fills the configured
 * database with N realistic documents of one workspace (rows only unless `--objects`); `--help` lists options.
 * `npm run bench -- scale [--sizes 0,100000,1000000]` (`scale.ts`): the everyday requests' cost at each archive
 * size, on PostgreSQL and PGlite; writes the "Scale" section of docs/benchmarks.md.
 *
 * `npm run bench -- certificate [--runs N] [--pdf FILE]` (`certificates.ts`): a B-LTA certificate of a 1 MB PDF,
 * ours against `@libpdf/core`, with the same loopback TSA and OCSP responders (printed only).
 *
 * `npm run bench -- capture [--runs N]` (`capture.ts`): a loopback page captured by the service's capture path
 * against a bare Playwright launch + `goto` + full-page screenshot in the same Chromium, with each stage's share
 * (printed only).
 *
 * `npm run bench -- certificates` runs part 4 alone, `npm run bench:catalog` part 5 (results printed,
 * `results.json` left as it is).
 *
 * MB means MiB (2^20 bytes) throughout. Every child process and the temp dir are removed at the end, also on
 * failure or Ctrl-C. `BENCH_SERVER_NODE_ARGS` adds Node flags to the server process, e.g.
 * `BENCH_SERVER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" npm run bench` to profile it;
 * `BENCH_RECEIVER_NODE_ARGS` the same for the ingest's baseline receiver (which runs Node's defaults).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { buildServer } from '../../server/build/build';
import { benchAnchorCost, reportAnchorCost } from './anchor-cost';
import { type AnchoringResults, benchAnchoring, reportAnchoring } from './anchoring';
import { benchCapture, reportCapture } from './capture';
import { benchCatalog, type CatalogBenchResults, reportCatalog } from './catalog';
import {
  benchCertificateLta,
  benchCertificates,
  type CertificateResults,
  reportCertificateLta,
  reportCertificates,
} from './certificates';
import { benchIdle, type IdleResults, reportIdle } from './idle';
import {
  type Child,
  curlUpload,
  freePort,
  type LoadResult,
  loadTest,
  MiB,
  median,
  nodeScript,
  readCpuSeconds,
  readRss,
  readThrough,
  runCommand,
  sampleRss,
  startChild,
  uploadFile,
  writeRandomFile,
} from './lib';
import { scaleCommand } from './scale';
import { seedCommand } from './seed';
import { benchTransparencyLog } from './tlog';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NODE = path.join(ROOT, 'node_modules', '.bin', 'node');
const RESULTS_FILE = path.join(ROOT, 'test', 'bench', 'results.json');

const FILE_BYTES = 200 * MiB;
const WARMUP_UPLOAD_BYTES = 1 * MiB;
const UPLOAD_RUNS = 5;
const RSS_SAMPLE_MS = 10;
const CONNECTIONS = 50;
const LOAD_WARMUP_S = 1;
const LOAD_S = 10;
/** Rounds of public verify unless `--runs N` says otherwise (`npm run bench -- verify --runs 5`). */
const VERIFY_ROUNDS = 2;
/** Interleaved slices each verify target's measured seconds are split into (`interleavedLoad`). */
const VERIFY_SLICES = 5;
const SERVER_START_TIMEOUT_MS = 300_000;
/** A fresh session token before a service upload once the last is this old (tokens live 300 s). */
const TOKEN_REFRESH_MS = 200_000;
const GOALS = { ingestRatio: 0.95, rssGrowthMB: 64, verifyRpsRatio: 0.9, verifyP99Ratio: 1.2 };
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

/** One upload of the big file by the measured client (curl) to the baseline receiver. */
interface ReceiverRun {
  wallS: number;
  throughputMBps: number;
  /** CPU time (user + system) of the receiving process during the upload, s. */
  cpuS: number;
  /** 1-minute load average right after the run (the bench's own processes count in it). */
  loadAverage: number;
}

/** One upload of the big file by the same client to the service. */
interface UploadRun extends ReceiverRun {
  /** The receiver's time in the same round / this time. */
  ratio: number;
  rssBaselineMB: number;
  rssPeakMB: number;
  rssGrowthMB: number;
  rssSamples: number;
  /** The service's own `Server-Timing` for this upload (`SERVER_TIMING=on`), ms per stage. */
  stages: Record<string, number>;
}

/** One autocannon run, with its target's CPU cost and the machine's load. */
interface LoadRun extends LoadResult {
  /** CPU time (user + system) of the target process per request answered, µs. */
  cpuUsPerRequest: number;
  /** 1-minute load average right after the run. */
  loadAverage: number;
}

/** Part 1's figures, alone or within part 2's summary. */
interface IngestSummary {
  bestReceiverS: number;
  bestServiceS: number;
  /** Median over the rounds of (receiver time / service time in the same round). */
  ingestRatio: number;
  /** Lowest and highest round ratio. */
  ingestRatioSpread: [number, number];
  worstRssGrowthMB: number;
  ingestGoalMet: boolean;
  rssGoalMet: boolean;
}

/** Part 1: ingest against the minimal receiver. */
interface IngestResults {
  file: { bytes: number; sha256: string };
  serverStartS: number;
  hashTools: { sha256sumS: number; opensslS: number };
  ingest: HttpResults['ingest'];
  summary: IngestSummary;
}

/** Parts 1 and 2: ingest against the minimal receiver, public verify against bare Express. */
interface HttpResults {
  file: { bytes: number; sha256: string };
  serverStartS: number;
  /** Diagnostics only: hashing the file on this CPU (sha256sum has no SHA extensions here, openssl does). */
  hashTools: { sha256sumS: number; opensslS: number };
  ingest: {
    client: string;
    /** The bench's own Node client (`uploadFile`) to the receiver: which client is faster. */
    nodeClientToReceiverS: number;
    receiver: ReceiverRun[];
    service: UploadRun[];
  };
  verify: {
    positiveUrl: string;
    negativeUrl: string;
    bodyBytes: number;
    connections: number;
    durationS: number;
    /** Per round: service positive, bare, service negative. */
    positive: LoadRun[];
    bare: LoadRun[];
    negative: LoadRun[];
  };
  summary: IngestSummary & {
    /** Each target's figures, each the median over the rounds. */
    verifyService: LoadFigures;
    verifyBare: LoadFigures;
    verifyNegative: LoadFigures;
    /** Service (known hash) / bare Express within each round (the two share that round's machine): median, spread. */
    verifyRpsRatio: Spread;
    verifyP99Ratio: Spread;
    verifyCpuRatio: Spread;
    /** Both goals met by the median ratios. */
    verifyGoalMet: boolean;
    /** Service (unknown hash) / bare Express within each round. */
    negativeRpsRatio: Spread;
    negativeP99Ratio: Spread;
    serviceNon2xx: number;
    service429: number;
  };
}

/** A target's load figures (requests/s, p50 and p99 in ms, server CPU µs per request). */
type LoadFigures = Pick<LoadRun, 'rps' | 'p50' | 'p99' | 'cpuUsPerRequest'>;

/** A figure over the rounds: its median, lowest and highest. */
interface Spread {
  median: number;
  min: number;
  max: number;
}

interface Machine {
  node: string;
  cpus: number;
  cpuModel: string;
  memoryGB: number;
  /** 1-minute load average before and after the run: other work on the machine skews every figure. */
  loadAverage: { before: number; after: number };
}

interface Results extends HttpResults {
  date: string;
  machine: Machine;
  /** Anchoring cost per batch and latency to `registered` (see `anchoring.ts`). */
  anchoring: AnchoringResults;
  certificates: CertificateResults;
  /** Catalog sync throughput, search latency, recall@5 (see `catalog.ts`). */
  catalog: CatalogBenchResults;
  /** `npm start` time to `/health` ok, idle RSS/PSS and its breakdown (see `idle.ts`). */
  idle: IdleResults;
}

const mb = (bytes: number) => bytes / MiB;
const load1 = () => os.loadavg()[0] ?? 0;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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

/** Hashes `file` with a command printing `<hex>` somewhere in its output (`sha256sum`, `openssl dgst`). */
async function hashTool(command: string, args: string[]): Promise<{ hash: string; wallMs: number }> {
  const r = await runCommand(command, args, { cwd: ROOT });
  const hash = /\b([0-9a-f]{64})\b/.exec(r.stdout)?.[1];
  if (r.code !== 0 || !hash) throw new Error(`${command} failed (${r.code}): ${r.stderr}`);
  return { hash, wallMs: r.wallMs };
}

/** Node flags from the environment variable `name` (words separated by spaces; none when unset). */
function nodeArgsFromEnv(name: string): string[] {
  return (process.env[name] ?? '').split(/\s+/).filter(Boolean);
}

/** Removes every file in `dir` (the receiver's uploads, outside the timed window). */
async function emptyDir(dir: string): Promise<void> {
  for (const name of await readdir(dir)) await rm(path.join(dir, name), { force: true });
}

/** One target of an interleaved load (`interleavedLoad`): what its lines say, its URL and the process to read. */
interface LoadTarget {
  label: string;
  url: string;
  pid: number;
}

/**
 * Loads each of `targets` for `seconds` in all, in `slices` turns interleaved back and forth (A B C, C B A,
 * A B C, ...), after a warm-up of each: the machine's speed drifts over tens of seconds on a shared host, and
 * interleaving makes each target see the same drift, so that ratios between targets measure the targets. Per
 * target: requests/s over the whole measured time, p50 and p99 the medians of its slices', CPU time of its `pid`
 * per request answered. Prints a line per target.
 */
async function interleavedLoad<const T extends readonly LoadTarget[]>(
  targets: T,
  clockTicks: number,
  seconds: number,
  slices: number,
): Promise<{ [K in keyof T]: LoadRun }> {
  for (const t of targets) await loadTest(t.url, CONNECTIONS, LOAD_WARMUP_S);
  const parts: { result: LoadResult; cpuS: number }[][] = targets.map(() => []);
  for (let slice = 0; slice < slices; slice++) {
    const order = targets.map((_, i) => i);
    if (slice % 2 === 1) order.reverse();
    for (const i of order) {
      const t = targets[i] as LoadTarget;
      const cpuBefore = readCpuSeconds(t.pid, clockTicks);
      const result = await loadTest(t.url, CONNECTIONS, seconds / slices);
      parts[i]?.push({ result, cpuS: readCpuSeconds(t.pid, clockTicks) - cpuBefore });
    }
  }
  // One run per target, in the targets' order: the tuple's own shape.
  return targets.map((t, i) => reportLoad(t.label, combineSlices(parts[i] ?? []))) as {
    [K in keyof T]: LoadRun;
  };
}

/** One target's slices as one run: totals summed, rps over the summed time, latencies the slices' medians. */
function combineSlices(
  parts: readonly { result: LoadResult; cpuS: number }[],
): LoadResult & { cpuS: number } {
  const statusCodes: Record<string, number> = {};
  for (const { result } of parts) {
    for (const [code, n] of Object.entries(result.statusCodes))
      statusCodes[code] = (statusCodes[code] ?? 0) + n;
  }
  const sum = (pick: (p: { result: LoadResult; cpuS: number }) => number) =>
    parts.reduce((acc, p) => acc + pick(p), 0);
  const requests = sum((p) => p.result.requests);
  const durationS = sum((p) => p.result.durationS);
  return {
    rps: requests / Math.max(durationS, 1e-9),
    p50: median(parts.map((p) => p.result.p50)),
    p99: median(parts.map((p) => p.result.p99)),
    requests,
    durationS,
    non2xx: sum((p) => p.result.non2xx),
    statusCodes,
    errors: sum((p) => p.result.errors),
    timeouts: sum((p) => p.result.timeouts),
    cpuS: sum((p) => p.cpuS),
  };
}

/** Prints a target's line of a round (and a loud warning on any non-2xx answer); returns it as a `LoadRun`. */
function reportLoad(label: string, r: LoadResult & { cpuS: number }): LoadRun {
  const { cpuS, ...result } = r;
  const cpuUsPerRequest = (cpuS * 1e6) / Math.max(1, r.requests);
  const run: LoadRun = { ...result, cpuUsPerRequest, loadAverage: load1() };
  const codes = Object.entries(r.statusCodes)
    .map(([code, n]) => `${code}×${n}`)
    .join(' ');
  console.log(
    `[bench] ${label}: ${r.rps.toFixed(0)} req/s, p99 ${r.p99} ms, ${cpuUsPerRequest.toFixed(0)} µs CPU/request, ` +
      `statuses ${codes || 'none'}, load average ${run.loadAverage.toFixed(2)}`,
  );
  if (r.non2xx > 0 || r.errors > 0) {
    console.warn(
      `[bench] WARNING ${label}: ${r.non2xx} non-2xx answers (${codes}), ${r.errors} errors, ${r.timeouts} timeouts` +
        ((r.statusCodes['429'] ?? 0) > 0
          ? ' — RATE LIMITED (429): the rps figure is not the service capacity'
          : ''),
    );
  }
  return run;
}

/** The median, lowest and highest of `values`. */
function spread(values: number[]): Spread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

/** Each figure's median over `runs`. */
function medianFigures(runs: LoadRun[]): LoadFigures {
  const of = (pick: (r: LoadRun) => number) => median(runs.map(pick));
  return {
    rps: of((r) => r.rps),
    p50: of((r) => r.p50),
    p99: of((r) => r.p99),
    cpuUsPerRequest: of((r) => r.cpuUsPerRequest),
  };
}

/** `a[i] / b[i]` for each round `i`. */
const perRound = (a: LoadRun[], b: LoadRun[], pick: (r: LoadRun) => number): number[] =>
  a.map((r, i) => pick(r) / pick(b[i] ?? r));

function machineInfo(loadBefore: number): Machine {
  const cpus = os.cpus();
  return {
    node: process.version,
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    memoryGB: Math.round(os.totalmem() / 2 ** 30),
    loadAverage: { before: loadBefore, after: load1() },
  };
}

/**
 * The service as operators run it (`npm run start:production`): built once by `npm run build:server`
 * (`server/dist/`, no tsx loader), started with that script's Node arguments and its variables (glibc's malloc
 * settings) but `NODE_ENV=production`: production refuses `RATE_LIMITS=off`, which the bench needs to measure
 * throughput rather than the spec's limits; on the measured routes the environment changes nothing else (it
 * picks the log format, and nothing is logged at `LOG_LEVEL=warn`).
 */
async function builtService(): Promise<{
  nodeArgs: string[];
  entry: string;
  scriptEnv: Record<string, string>;
}> {
  const startedAt = performance.now();
  await buildServer();
  const { nodeArgs, entry, env } = nodeScript(ROOT, 'start:production', 'server/dist/main.mjs');
  const { NODE_ENV: _production, ...scriptEnv } = env;
  console.log(`Built server/dist in ${((performance.now() - startedAt) / 1000).toFixed(1)} s`);
  return { nodeArgs, entry, scriptEnv };
}

/**
 * Part 1 (`npm run bench -- ingest [--runs N] [--mb N]` alone): the service started, the same curl upload
 * to the receiver and to the service, alternately, `uploadRuns` rounds of `uploadMB`; the service left running
 * for part 2.
 */
async function benchIngest(
  cleanup: Cleanup,
  options: { verifyOnly?: boolean; uploadMB?: number; uploadRuns?: number } = {},
): Promise<{ results: IngestResults; server: Child; url: string; clockTicks: number }> {
  const fileBytes = options.verifyOnly ? 1 * MiB : (options.uploadMB ?? FILE_BYTES / MiB) * MiB;
  const uploadRuns = options.verifyOnly ? 1 : (options.uploadRuns ?? UPLOAD_RUNS);
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'notary-bench-'));
  cleanup.add('temp dir', () => rm(tmp, { recursive: true, force: true }));
  const big = path.join(tmp, 'big.bin');
  const small = path.join(tmp, 'small.bin');
  const dataDir = path.join(tmp, 'data');
  const receiverDir = path.join(tmp, 'receiver');
  await mkdir(dataDir);
  await mkdir(receiverDir);

  // --- The file; sha256sum and openssl on a hot page cache (diagnostics) ------------------------------------
  console.log(`[bench] writing ${mb(fileBytes)} MB of random bytes to ${big}`);
  await writeRandomFile(big, fileBytes);
  await writeRandomFile(small, WARMUP_UPLOAD_BYTES);
  const smallHash = createHash('sha256')
    .update(await readFile(small))
    .digest('hex');
  await readThrough(big);
  const sha = await hashTool('sha256sum', [big]);
  const bigHash = sha.hash;
  const openssl = await hashTool('openssl', ['dgst', '-sha256', '-r', big]);
  if (openssl.hash !== bigHash) throw new Error(`openssl says ${openssl.hash}, sha256sum ${bigHash}`);
  const hashTools = { sha256sumS: sha.wallMs / 1000, opensslS: openssl.wallMs / 1000 };
  console.log(
    `[bench] sha256sum ${hashTools.sha256sumS.toFixed(3)} s, openssl ${hashTools.opensslS.toFixed(3)} s (${bigHash})`,
  );

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
    // Each upload's answer says how long each of its stages took (a header; nothing measured when off).
    SERVER_TIMING: 'on',
  });
  const extraNodeArgs = nodeArgsFromEnv('BENCH_SERVER_NODE_ARGS');
  const production = await builtService();
  const startedAt = performance.now();
  const server = startChild('server', NODE, [...production.nodeArgs, ...extraNodeArgs, production.entry], {
    cwd: ROOT,
    env: { ...env, ...production.scriptEnv },
  });
  cleanup.add('server', () => server.stop());
  const url = (await server.waitForLine(/\[notary\] listening on (\S+)/, SERVER_START_TIMEOUT_MS))[1] ?? '';
  const serverStartS = (performance.now() - startedAt) / 1000;
  const command = [
    ...Object.entries(production.scriptEnv).map(([name, value]) => `${name}=${value}`),
    'node',
    ...production.nodeArgs,
    ...extraNodeArgs,
    production.entry,
  ].join(' ');
  console.log(
    `Server pid ${server.pid} (the built service: ${command}) listening on ${url} after ${serverStartS.toFixed(1)} s`,
  );

  console.log(`[bench] creating ${EMAIL} and a session token with the operator CLI`);
  await operator(env, ['user:create', '--email', EMAIL]);
  let token = await operator(env, ['token', '--email', EMAIL]);
  let tokenAt = performance.now();
  const freshToken = async () => {
    if (performance.now() - tokenAt > TOKEN_REFRESH_MS) {
      token = await operator(env, ['token', '--email', EMAIL]);
      tokenAt = performance.now();
    }
    return token;
  };
  const clockTicks = Number((await runCommand('getconf', ['CLK_TCK'], { cwd: ROOT })).stdout.trim()) || 100;

  // --- The baseline receiver, as its own process ------------------------------------------------------------
  const receiverNodeArgs = nodeArgsFromEnv('BENCH_RECEIVER_NODE_ARGS');
  const receiver = startChild(
    'receiver',
    NODE,
    [...receiverNodeArgs, '--import', 'tsx', 'test/bench/receiver.ts'],
    {
      cwd: ROOT,
      env: childEnv({ HOST: '127.0.0.1', PORT: String(await freePort()), RECEIVER_DIR: receiverDir }),
    },
  );
  cleanup.add('receiver', () => receiver.stop());
  const receiverUrl = (await receiver.waitForLine(/\[receiver\] listening on (\S+)/, 60_000))[1] ?? '';

  /** Checks an upload's answer (status, hash); throws loudly otherwise. Returns the time in seconds. */
  const checked = (
    who: string,
    outcome: { status: number; body: string; wallMs: number },
    status: number,
    hashOf: (body: Record<string, unknown>) => unknown,
    expected: string,
    child: Child,
  ): number => {
    if (outcome.status !== status) {
      throw new Error(`${who} answered ${outcome.status}: ${outcome.body}\n${who} output:\n${child.tail()}`);
    }
    const got = hashOf(JSON.parse(outcome.body) as Record<string, unknown>);
    if (got !== expected)
      throw new Error(`HASH MISMATCH: ${who} says ${String(got)}, sha256sum says ${expected}`);
    return outcome.wallMs / 1000;
  };
  const toReceiver = async (file: string, expected: string): Promise<number> => {
    const outcome = await curlUpload(receiverUrl, file, { cwd: ROOT });
    // The receiver's files are removed outside the timed window.
    await emptyDir(receiverDir);
    return checked('receiver', outcome, 200, (b) => b.sha256, expected, receiver);
  };
  let lastStages: Record<string, number> = {};
  const toService = async (file: string, expected: string, bearer: string): Promise<number> => {
    const outcome = await curlUpload(url, file, { cwd: ROOT, token: bearer });
    lastStages = outcome.serverTiming;
    return checked('server', outcome, 201, (b) => b.sha256Hash, expected, server);
  };

  // --- Ingest: the same curl upload to the receiver and to the service, alternately -------------------------
  console.log(`[bench] warm-up uploads (${mb(WARMUP_UPLOAD_BYTES)} MB) to the receiver and the service`);
  await toReceiver(small, smallHash);
  await toService(small, smallHash, token);
  const nodeOutcome = await uploadFile(receiverUrl, 'none', big, path.basename(big));
  await emptyDir(receiverDir);
  const nodeClientToReceiverS = checked('receiver', nodeOutcome, 200, (b) => b.sha256, bigHash, receiver);
  console.log(`[bench] the bench's Node client to the receiver: ${nodeClientToReceiverS.toFixed(3)} s`);

  const receiverRuns: ReceiverRun[] = [];
  const uploads: UploadRun[] = [];
  for (let i = 1; i <= uploadRuns; i++) {
    await pause(500);
    const receiverCpuBefore = readCpuSeconds(receiver.pid, clockTicks);
    const receiverS = await toReceiver(big, bigHash);
    receiverRuns.push({
      wallS: receiverS,
      throughputMBps: mb(fileBytes) / receiverS,
      cpuS: readCpuSeconds(receiver.pid, clockTicks) - receiverCpuBefore,
      loadAverage: load1(),
    });
    const bearer = await freshToken();
    await pause(500);
    const baseline = readRss(server.pid);
    const cpuBefore = readCpuSeconds(server.pid, clockTicks);
    const sampler = sampleRss(server.pid, RSS_SAMPLE_MS);
    const wallS = await toService(big, bigHash, bearer).finally(() => sampler.stop());
    const { peak, samples } = sampler.stop();
    const run: UploadRun = {
      wallS,
      throughputMBps: mb(fileBytes) / wallS,
      loadAverage: load1(),
      ratio: receiverS / wallS,
      rssBaselineMB: mb(baseline),
      rssPeakMB: mb(peak),
      rssGrowthMB: mb(peak - baseline),
      rssSamples: samples,
      cpuS: readCpuSeconds(server.pid, clockTicks) - cpuBefore,
      stages: lastStages,
    };
    uploads.push(run);
    console.log(
      `[bench] upload ${i}/${uploadRuns} by curl: receiver ${receiverS.toFixed(3)} s, service ${wallS.toFixed(3)} s, ` +
        `ratio ${run.ratio.toFixed(2)}, RSS ${run.rssBaselineMB.toFixed(1)} → ${run.rssPeakMB.toFixed(1)} MB ` +
        `(+${run.rssGrowthMB.toFixed(1)}, ${samples} samples), CPU receiver ${receiverRuns[i - 1]?.cpuS.toFixed(2)} s ` +
        `/ server ${run.cpuS.toFixed(2)} s, ` +
        `load average ${run.loadAverage.toFixed(2)}`,
    );
  }
  await receiver.stop();
  const results: IngestResults = {
    file: { bytes: fileBytes, sha256: bigHash },
    serverStartS,
    hashTools,
    ingest: { client: 'curl', nodeClientToReceiverS, receiver: receiverRuns, service: uploads },
    summary: summarizeIngest(receiverRuns, uploads),
  };
  return { results, server, url, clockTicks };
}

/** The ingest figures of the rounds: median ratio and its spread, best times, worst RSS growth. */
function summarizeIngest(receiverRuns: ReceiverRun[], uploads: UploadRun[]): IngestSummary {
  const ratios = uploads.map((u) => u.ratio).sort((a, b) => a - b);
  const ingestRatio = median(ratios);
  const worstRssGrowthMB = Math.max(...uploads.map((u) => u.rssGrowthMB));
  return {
    bestReceiverS: Math.min(...receiverRuns.map((u) => u.wallS)),
    bestServiceS: Math.min(...uploads.map((u) => u.wallS)),
    ingestRatio,
    ingestRatioSpread: [ratios[0] ?? Number.NaN, ratios[ratios.length - 1] ?? Number.NaN],
    worstRssGrowthMB,
    ingestGoalMet: ingestRatio >= GOALS.ingestRatio,
    rssGoalMet: worstRssGrowthMB < GOALS.rssGrowthMB,
  };
}

/**
 * Parts 1 and 2: see the file's comment. `verify`: part 2 alone in substance (`npm run bench -- verify`): a
 * 1 MiB file uploaded once instead of the 200 MB rounds, so the verify figures come in about a minute.
 */
async function benchHttp(
  cleanup: Cleanup,
  options: {
    verifyOnly?: boolean;
    verifyRounds?: number;
    verifySeconds?: number;
    uploadMB?: number;
    uploadRuns?: number;
  } = {},
): Promise<HttpResults> {
  const rounds = options.verifyRounds ?? VERIFY_ROUNDS;
  const seconds = options.verifySeconds ?? LOAD_S;
  // Slices of at least 2 s: autocannon's connections and the first requests of a slice weigh on shorter ones.
  const slices = Math.max(1, Math.min(VERIFY_SLICES, Math.floor(seconds / 2)));
  const ingested = await benchIngest(cleanup, options);
  const { server, url, clockTicks } = ingested;
  const bigHash = ingested.results.file.sha256;

  // --- Public verify: service (known and unknown hash) and bare Express, alternately -------------------------
  const positivePath = `/api/public/verify?hash=${bigHash}`;
  const negativePath = `/api/public/verify?hash=${randomBytes(32).toString('hex')}`;
  const probe = await fetch(`${url}${positivePath}`);
  const verifyBody = await probe.text();
  if (probe.status !== 200 || !(JSON.parse(verifyBody) as { found?: unknown }).found) {
    throw new Error(`verify probe answered ${probe.status}: ${verifyBody}`);
  }
  const negativeProbe = await fetch(`${url}${negativePath}`);
  const negativeBody = await negativeProbe.text();
  if (negativeProbe.status !== 200 || (JSON.parse(negativeBody) as { found?: unknown }).found !== false) {
    throw new Error(`verify probe of an unknown hash answered ${negativeProbe.status}: ${negativeBody}`);
  }
  const bodyBytes = Buffer.byteLength(verifyBody);

  // Plain Node (its own type stripping), as the built service runs without the tsx loader.
  const bare = startChild('bare', NODE, ['test/bench/bare-express.ts'], {
    cwd: ROOT,
    env: childEnv({ HOST: '127.0.0.1', PORT: String(await freePort()), BARE_BODY: verifyBody }),
  });
  cleanup.add('bare express', () => bare.stop());
  const bareUrl = (await bare.waitForLine(/\[bare\] listening on (\S+)/, 60_000))[1] ?? '';
  const bareProbe = await (await fetch(`${bareUrl}${positivePath}`)).text();
  if (Buffer.byteLength(bareProbe) !== bodyBytes) {
    throw new Error(`bare body is ${Buffer.byteLength(bareProbe)} bytes, service body ${bodyBytes}`);
  }

  console.log(
    `Verify: ${rounds} rounds of service (known hash), bare Express, service (unknown hash); each ` +
      `${LOAD_WARMUP_S} s warm-up then ${seconds} s at ${CONNECTIONS} connections, in ${slices} interleaved slices`,
  );
  const positive: LoadRun[] = [];
  const bareRuns: LoadRun[] = [];
  const negative: LoadRun[] = [];
  for (let round = 1; round <= rounds; round++) {
    const of = `${round}/${rounds}`;
    const [known, bareRun, unknown] = await interleavedLoad(
      [
        { label: `service, known hash ${of}`, url: `${url}${positivePath}`, pid: server.pid },
        { label: `bare Express ${of}`, url: `${bareUrl}${positivePath}`, pid: bare.pid },
        { label: `service, unknown hash ${of}`, url: `${url}${negativePath}`, pid: server.pid },
      ],
      clockTicks,
      seconds,
      slices,
    );
    positive.push(known);
    bareRuns.push(bareRun);
    negative.push(unknown);
  }
  await bare.stop();
  await server.stop();

  const verifyRpsRatio = spread(perRound(positive, bareRuns, (r) => r.rps));
  const verifyP99Ratio = spread(perRound(positive, bareRuns, (r) => r.p99));
  const all = [...positive, ...negative];
  return {
    ...ingested.results,
    verify: {
      positiveUrl: positivePath,
      negativeUrl: negativePath,
      bodyBytes,
      connections: CONNECTIONS,
      durationS: seconds,
      positive,
      bare: bareRuns,
      negative,
    },
    summary: {
      ...ingested.results.summary,
      verifyService: medianFigures(positive),
      verifyBare: medianFigures(bareRuns),
      verifyNegative: medianFigures(negative),
      verifyRpsRatio,
      verifyP99Ratio,
      verifyCpuRatio: spread(perRound(positive, bareRuns, (r) => r.cpuUsPerRequest)),
      verifyGoalMet:
        verifyRpsRatio.median >= GOALS.verifyRpsRatio && verifyP99Ratio.median <= GOALS.verifyP99Ratio,
      negativeRpsRatio: spread(perRound(negative, bareRuns, (r) => r.rps)),
      negativeP99Ratio: spread(perRound(negative, bareRuns, (r) => r.p99)),
      serviceNon2xx: all.reduce((n, r) => n + r.non2xx, 0),
      service429: all.reduce((n, r) => n + (r.statusCodes['429'] ?? 0), 0),
    },
  };
}

async function bench(cleanup: Cleanup): Promise<Results> {
  const loadBefore = load1();
  const http = await benchHttp(cleanup);

  const anchoring = await benchAnchoring({
    root: ROOT,
    node: NODE,
    addCleanup: (label, run) => cleanup.add(label, run),
    operator,
    childEnv,
  });

  return {
    date: new Date().toISOString(),
    ...http,
    anchoring,
    certificates: await benchCertificates({
      root: ROOT,
      node: NODE,
      addCleanup: (label, run) => cleanup.add(label, run),
      childEnv,
    }),
    catalog: await benchCatalog(),
    idle: await benchIdle({ root: ROOT, node: NODE, addCleanup: (label, run) => cleanup.add(label, run) }),
    machine: machineInfo(loadBefore),
  };
}

const fx = (n: number, digits: number) => n.toFixed(digits);
const goal = (ok: boolean) => (ok ? '✅' : '❌');

/** The ingest lines of the summary table (`| measure | value | goal |`). */
function ingestRows(r: IngestResults): string[] {
  const s = r.summary;
  const rounds = r.ingest.service.length;
  // The goal is set for the 200 MB rounds: a small upload (`verify`'s 1 MB, `--mb N`) is mostly fixed costs.
  const judged = r.file.bytes === FILE_BYTES;
  const ratioGoal = judged
    ? `≥ ${GOALS.ingestRatio} ${goal(s.ingestGoalMet)}`
    : `(judged on ${FILE_BYTES / MiB} MB uploads)`;
  return [
    '| measure | value | goal |',
    '| --- | --- | --- |',
    `| upload ${mb(r.file.bytes)} MB by curl to the minimal receiver (s), best of ${rounds} | ${fx(s.bestReceiverS, 3)} | |`,
    `| upload ${mb(r.file.bytes)} MB by curl to the service (s), best of ${rounds} | ${fx(s.bestServiceS, 3)} | |`,
    `| ingest ratio (receiver time / service time, same round), median of ${rounds} (min–max) | ` +
      `${fx(s.ingestRatio, 2)} (${fx(s.ingestRatioSpread[0], 2)}–${fx(s.ingestRatioSpread[1], 2)}) | ` +
      `${ratioGoal} |`,
    `| peak RSS growth during upload (MB), worst of ${rounds} | ${fx(s.worstRssGrowthMB, 1)} | < ${GOALS.rssGrowthMB} ${goal(s.rssGoalMet)} |`,
  ];
}

/** Where an upload's time goes, from the service's `Server-Timing`; indented stages are part of the one above. */
const UPLOAD_STAGES: { stage: string; label: string }[] = [
  { stage: 'auth', label: 'session token checked' },
  { stage: 'disk-floor', label: 'disk floor check' },
  { stage: 'quota', label: 'quota check (early)' },
  { stage: 'body', label: 'body: multipart parse, hash, write, fsync (at the client’s pace)' },
  { stage: 'hash', label: '↳ SHA-256' },
  { stage: 'store-tail', label: '↳ last byte to object stored (flush, fsync, rename)' },
  { stage: 'media-type', label: 'media type' },
  { stage: 'record', label: 'database: the row’s transaction' },
  { stage: 'insert', label: '↳ row insert' },
  { stage: 'tlog', label: '↳ transparency log entry' },
  { stage: 'anchoring-enqueue', label: '↳ anchoring enqueue' },
  { stage: 'quota-charge', label: '↳ quota charge (row lock)' },
  { stage: 'commit', label: '↳ commit' },
];

/** The per-round table and the per-stage table of part 1. */
function ingestRounds(r: IngestResults): string[] {
  const rounds = r.ingest.service;
  const stageRows = UPLOAD_STAGES.flatMap(({ stage, label }) => {
    const ms = rounds.map((u) => u.stages[stage]).filter((v): v is number => v !== undefined);
    if (ms.length === 0) return [];
    const shares = rounds.map((u) => ((u.stages[stage] ?? 0) / (u.wallS * 1000)) * 100);
    return [
      `| ${label} | ${fx(median(ms), 1)} | ${fx(Math.min(...ms), 1)}–${fx(Math.max(...ms), 1)} | ${fx(median(shares), 1)} % |`,
    ];
  });
  return [
    '| upload round | receiver (s) | service (s) | ratio | service MB/s | RSS before (MB) | RSS peak (MB) | growth (MB) | samples | CPU receiver / server (s) | load avg |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rounds.map(
      (u, i) =>
        `| ${i + 1} | ${fx(r.ingest.receiver[i]?.wallS ?? Number.NaN, 3)} | ${fx(u.wallS, 3)} | ${fx(u.ratio, 2)} | ` +
        `${fx(u.throughputMBps, 0)} | ${fx(u.rssBaselineMB, 1)} | ${fx(u.rssPeakMB, 1)} | ${fx(u.rssGrowthMB, 1)} | ` +
        `${u.rssSamples} | ${fx(r.ingest.receiver[i]?.cpuS ?? Number.NaN, 2)} / ${fx(u.cpuS, 2)} | ${fx(u.loadAverage, 1)} |`,
    ),
    '',
    `| upload stage (service's Server-Timing), median of ${rounds.length} | ms | min–max (ms) | share of the upload |`,
    '| --- | --- | --- | --- |',
    ...(stageRows.length > 0 ? stageRows : ['| (no Server-Timing in the answers) | | | |']),
  ];
}

/** Part 2's rounds, one line each: the service's known hash against bare Express in the same round. */
function verifyRounds(v: HttpResults['verify']): string[] {
  const f = (n: number, digits: number) => n.toFixed(digits);
  return [
    '| verify round | known hash (req/s) | bare Express (req/s) | ratio | p99 known / bare (ms) | ratio | CPU µs/request known / bare | unknown hash (req/s, CPU µs/request) | load avg |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...v.positive.map((k, i) => {
      const b = v.bare[i] ?? k;
      const u = v.negative[i] ?? k;
      return (
        `| ${i + 1} | ${f(k.rps, 0)} | ${f(b.rps, 0)} | ${f(k.rps / b.rps, 2)} | ${k.p99} / ${b.p99} | ${f(k.p99 / b.p99, 2)} | ` +
        `${f(k.cpuUsPerRequest, 0)} / ${f(b.cpuUsPerRequest, 0)} | ${f(u.rps, 0)}, ${f(u.cpuUsPerRequest, 0)} | ` +
        `${f(k.loadAverage, 1)} / ${f(b.loadAverage, 1)} / ${f(u.loadAverage, 1)} |`
      );
    }),
  ];
}

/** Part 1 alone (`npm run bench -- ingest`). */
function reportIngest(r: IngestResults & { date: string; machine: Machine }): string {
  return [
    `Notary ingest bench, ${r.date}, Node ${r.machine.node}, ${r.machine.cpus} × ${r.machine.cpuModel}, ` +
      `load average ${fx(r.machine.loadAverage.before, 2)} → ${fx(r.machine.loadAverage.after, 2)}`,
    '',
    ...ingestRows(r),
    '',
    ...ingestRounds(r),
    '',
    `Diagnostics: sha256sum ${fx(r.hashTools.sha256sumS, 3)} s, openssl ${fx(r.hashTools.opensslS, 3)} s for the file; ` +
      `the bench's Node client to the receiver ${fx(r.ingest.nodeClientToReceiverS, 3)} s (curl is the client measured); ` +
      `server cold start ${fx(r.serverStartS, 1)} s.`,
  ].join('\n');
}

function reportHttp(r: HttpResults & { date: string; machine: Machine }): string {
  const f = (n: number, digits: number) => n.toFixed(digits);
  const mark = (ok: boolean) => (ok ? '✅' : '❌');
  const s = r.summary;
  const v = r.verify;
  const [vs, vb, vn] = [s.verifyService, s.verifyBare, s.verifyNegative];
  const rateNote = s.service429 > 0 ? ` ⚠ ${s.service429}× 429 (rate limited)` : '';
  const loads = (runs: { loadAverage: number }[]) => runs.map((x) => f(x.loadAverage, 1)).join(', ');
  const of = `median of ${v.positive.length} rounds`;
  const ratio = (x: Spread) => `${f(x.median, 2)} (${f(x.min, 2)}–${f(x.max, 2)})`;
  return [
    `Notary bench, ${r.date}, Node ${r.machine.node}, ${r.machine.cpus} × ${r.machine.cpuModel}, ` +
      `load average ${f(r.machine.loadAverage.before, 2)} → ${f(r.machine.loadAverage.after, 2)}`,
    '',
    ...ingestRows(r),
    `| verify rps, known hash (service / bare / ratio), ${of} | ${f(vs.rps, 0)} / ${f(vb.rps, 0)} / ${ratio(s.verifyRpsRatio)}${rateNote} | ≥ ${GOALS.verifyRpsRatio} ${mark(s.verifyRpsRatio.median >= GOALS.verifyRpsRatio)} |`,
    `| verify p99 ms, known hash (service / bare / ratio), ${of} | ${vs.p99} / ${vb.p99} / ${ratio(s.verifyP99Ratio)} | ≤ ${GOALS.verifyP99Ratio} ${mark(s.verifyP99Ratio.median <= GOALS.verifyP99Ratio)} |`,
    `| verify rps, unknown hash (service / ratio to bare), ${of} | ${f(vn.rps, 0)} / ${ratio(s.negativeRpsRatio)} | |`,
    `| verify p99 ms, unknown hash (service / ratio to bare), ${of} | ${vn.p99} / ${ratio(s.negativeP99Ratio)} | |`,
    `| server CPU µs per request (known / unknown / bare; known / bare), ${of} | ${f(vs.cpuUsPerRequest, 0)} / ${f(vn.cpuUsPerRequest, 0)} / ${f(vb.cpuUsPerRequest, 0)}; ${ratio(s.verifyCpuRatio)} | |`,
    `| verify non-2xx (service / bare) | ${s.serviceNon2xx} / ${v.bare.reduce((n, x) => n + x.non2xx, 0)} | 0 |`,
    '',
    ...verifyRounds(v),
    '',
    ...ingestRounds(r),
    '',
    `Diagnostics: sha256sum ${f(r.hashTools.sha256sumS, 3)} s, openssl ${f(r.hashTools.opensslS, 3)} s for the file; ` +
      `the bench's Node client to the receiver ${f(r.ingest.nodeClientToReceiverS, 3)} s (curl is the client measured). ` +
      `Verify body ${v.bodyBytes} bytes; p50 ms known ${vs.p50} / unknown ${vn.p50} / bare ${vb.p50}; load average after ` +
      `each verify run: known ${loads(v.positive)}, bare ${loads(v.bare)}, unknown ${loads(v.negative)}; ` +
      `server cold start ${f(r.serverStartS, 1)} s.`,
  ].join('\n');
}

function report(r: Results): string {
  const lines = [
    reportHttp(r),
    '',
    reportAnchoring(r.anchoring),
    '',
    reportCertificates(r.certificates),
    '',
    reportCatalog(r.catalog),
    '',
    reportIdle(r.idle),
  ];
  return lines.join('\n');
}

/** The positive integer after `name` among the command's arguments (`--runs 5`), if given. */
function positiveOption(name: string): number | undefined {
  const args = process.argv.slice(3);
  const i = args.indexOf(name);
  const value = i >= 0 ? Number(args[i + 1]) : undefined;
  if (value !== undefined && !(Number.isInteger(value) && value > 0)) {
    throw new Error(`${name} wants a positive integer`);
  }
  return value;
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
    if (process.argv[2] === 'seed') {
      await seedCommand(process.argv.slice(3));
      return;
    }
    if (process.argv[2] === 'scale') {
      await scaleCommand(process.argv.slice(3), {
        root: ROOT,
        node: NODE,
        addCleanup: (label, run) => cleanup.add(label, run),
      });
      return;
    }
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
    if (process.argv[2] === 'certificate') {
      const lta = await benchCertificateLta({
        root: ROOT,
        node: NODE,
        addCleanup: (label, run) => cleanup.add(label, run),
        childEnv,
        args: process.argv.slice(3),
      });
      console.log(`\n${reportCertificateLta(lta)}\n`);
      return;
    }
    if (process.argv[2] === 'capture') {
      const capture = await benchCapture({
        addCleanup: (label, run) => cleanup.add(label, run),
        args: process.argv.slice(3),
      });
      console.log(`\n${reportCapture(capture)}\n`);
      return;
    }
    if (process.argv[2] === 'tlog') {
      await benchTransparencyLog(process.argv.slice(3));
      return;
    }
    if (process.argv[2] === 'anchor-cost') {
      const cost = await benchAnchorCost({ addCleanup: (label, run) => cleanup.add(label, run) });
      console.log(`\n${reportAnchorCost(cost)}\n`);
      return;
    }
    if (process.argv[2] === 'idle') {
      const idle = await benchIdle({
        root: ROOT,
        node: NODE,
        addCleanup: (label, run) => cleanup.add(label, run),
        startsOnly: process.argv.slice(3).includes('--starts-only'),
      });
      console.log(`\n${reportIdle(idle)}\n`);
      return;
    }
    if (process.argv[2] === 'ingest') {
      const loadBefore = load1();
      const uploadMB = positiveOption('--mb');
      const uploadRuns = positiveOption('--runs');
      const { results, server } = await benchIngest(cleanup, {
        ...(uploadMB ? { uploadMB } : {}),
        ...(uploadRuns ? { uploadRuns } : {}),
      });
      await server.stop();
      const date = new Date().toISOString();
      console.log(`\n${reportIngest({ ...results, date, machine: machineInfo(loadBefore) })}\n`);
      return;
    }
    if (process.argv[2] === 'http' || process.argv[2] === 'verify') {
      const loadBefore = load1();
      const verifyRounds = positiveOption('--runs');
      const verifySeconds = positiveOption('--seconds');
      const uploadMB = positiveOption('--mb');
      const uploadRuns = positiveOption('--uploads');
      const http = await benchHttp(cleanup, {
        verifyOnly: process.argv[2] === 'verify',
        ...(verifyRounds ? { verifyRounds } : {}),
        ...(verifySeconds ? { verifySeconds } : {}),
        ...(uploadMB ? { uploadMB } : {}),
        ...(uploadRuns ? { uploadRuns } : {}),
      });
      const date = new Date().toISOString();
      console.log(`\n${reportHttp({ ...http, date, machine: machineInfo(loadBefore) })}\n`);
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
