/**
 * Memory and start-up part of `npm run bench` (alone: `npm run bench -- idle`, results printed only).
 *
 * 1. `npm start` itself, on the embedded defaults (PGlite, fs storage, both devnets), all processes counted:
 *    `npm start` is spawned in its own process group with a temp `DATA_DIR` and a free `PORT`; start-up time
 *    runs from the spawn to the first `GET /health` answering 200 (polled every 50 ms). Then the tree is left
 *    idle until its total RSS is stable (`STABLE_MB` over `STABLE_SAMPLES` samples 500 ms apart: background
 *    WebAssembly compilation done) and each process's `VmRSS` and PSS (`/proc/<pid>/smaps_rollup`: shared pages
 *    divided among their users, the honest sum) are read. Twice: a first start on the empty `DATA_DIR`
 *    (initdb and every migration included) and a restart on the same one. Goals: `/health` ok within 10 s of a
 *    first start and 5 s of a restart; every probe answered (503 `starting`, then 200) within 1 s, as an
 *    orchestrator's liveness probe waits; idle RSS under 600 MB after the first start and under 400 MB after
 *    the restart.
 * 2. The breakdown: each part alone in its own process (`idle-part.ts`), with the node flags of the start
 *    script, its memory read once its modules are loaded and again once it runs (both idle): Node with the tsx
 *    loader, the service's module graph, PGlite opened and migrated, the Hardhat (EDR) devnet, the Clarity VM
 *    devnet, and the whole service started in-process (`process.memoryUsage()`: heap, external, array buffers).
 *    PGlite is also measured with `--liftoff-only`, to show what V8's optimized WebAssembly code costs.
 *
 * 3. The production shape: the built service (`server/build/build.ts`), started by the command of the
 *    `start:production` script run directly (no npm, no tsx: what a supervisor runs) with `NODE_ENV=production`,
 *    a fresh PostgreSQL database (`TEST_PG_ADMIN_URL`), S3 (radosgw on loopback) and configured chains
 *    (`ANCHORING=configured`) whose endpoints are loopback stand-ins run by the bench itself (a Hardhat node with
 *    EAS, the Clarity-VM Stacks devnet; test/harness/production-shape.ts): no devnet inside the service. Node's compile cache in
 *    a fresh directory (`NODE_COMPILE_CACHE`), so the first start compiles everything and the restart reads the
 *    cache, as after a deployment. The same two starts and readings as 1. Goals: `/health` ok within 2 s (restart)
 *    and idle RSS under 250 MB. Skipped, with the reason in the results, when radosgw is not installed.
 *
 * MB means MiB. Every process group and temp directory is removed at the end, also on failure.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildServer } from '../../server/build/build';
import { startProductionStandIns } from '../harness/production-shape';
import { radosgwAvailable } from '../harness/radosgw';
import type { IdlePart, IdleSnapshot } from './idle-part';
import { freePort, nodeScript, runCommand } from './lib';

export const IDLE_GOALS = {
  rssMB: 400,
  /** A first start (initdb and every migration) idles higher: PGlite's WebAssembly memory never shrinks. */
  firstStartRssMB: 600,
  firstStartS: 10,
  restartS: 5,
  productionRestartS: 2,
  productionRssMB: 250,
  probeMs: 1000,
};
const HEALTH_POLL_MS = 50;
const START_TIMEOUT_MS = 300_000;
const SAMPLE_MS = 500;
const STABLE_SAMPLES = 10;
const STABLE_MB = 3;
const IDLE_LIMIT_MS = 120_000;

/** One process of the `npm start` tree. */
export interface IdleProcess {
  pid: number;
  command: string;
  rssMB: number;
  pssMB: number;
}

/** One start of `npm start`: time to `/health` ok, then the idle tree. */
export interface IdleStart {
  label: string;
  healthS: number;
  /**
   * The longest a `/health` probe waited for its answer (503 `starting` or 200) from the first answer to the
   * first 200, in milliseconds: what a liveness probe sees while the service starts (goal `IDLE_GOALS.probeMs`).
   */
  slowestProbeMs: number;
  /** Seconds from `/health` ok until the tree's RSS was stable. */
  settleS: number;
  processes: IdleProcess[];
  rssMB: number;
  pssMB: number;
}

export interface IdlePartResult {
  label: string;
  part: IdlePart;
  nodeArgs: string[];
  loaded: IdleSnapshot;
  running: IdleSnapshot;
  startMs: number;
}

/** A row of the breakdown: what one part adds, RSS and PSS (MB). */
export interface IdleBreakdownRow {
  label: string;
  rssMB: number;
  pssMB: number;
}

/** The production shape's two starts (3. above), or why they were not measured. */
export type ProductionShape = { starts: IdleStart[]; command: string } | { skipped: string };

export interface IdleResults {
  startScript: string;
  starts: IdleStart[];
  production: ProductionShape;
  parts: IdlePartResult[];
  breakdown: IdleBreakdownRow[];
  summary: {
    firstStartS: number;
    restartS: number;
    idleRssMB: number;
    idlePssMB: number;
    rssGoalMB: number;
    rssGoalMet: boolean;
    firstStartRssMB: number;
    firstStartRssGoalMB: number;
    firstStartRssGoalMet: boolean;
    startGoalsMet: boolean;
    /** Every `/health` probe of both starts answered (503 `starting` or 200) within `IDLE_GOALS.probeMs`. */
    probeGoalMet: boolean;
    productionRestartS: number | null;
    productionFirstS: number | null;
    productionRssMB: number | null;
    productionGoalsMet: boolean | null;
  };
}

function kB(text: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(text);
  return m?.[1] ? Number(m[1]) / 1024 : 0;
}

/** `pid` and its descendants (from `/proc/<pid>/stat` parent ids), parents first. */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name may hold spaces and parentheses: fields start after its closing one.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended while listing.
    }
  }
  const out: number[] = [];
  const visit = (pid: number) => {
    out.push(pid);
    for (const c of children.get(pid) ?? []) visit(c);
  };
  visit(root);
  return out;
}

function readProcess(pid: number): IdleProcess | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    return {
      pid,
      command: command.length > 80 ? `${command.slice(0, 77)}...` : command,
      rssMB: kB(status, 'VmRSS'),
      pssMB: kB(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'), 'Pss'),
    };
  } catch {
    return undefined;
  }
}

function treeRss(root: number): number {
  let total = 0;
  for (const pid of processTree(root)) total += readProcess(pid)?.rssMB ?? 0;
  return total;
}

/** SIGTERM to the group, SIGKILL after 10 s; resolves once the group leader has exited. */
async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid;
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-pid, s);
    } catch {
      // Already gone.
    }
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
  // The service may outlive npm by a moment: wait until nothing of the group is left.
  for (let i = 0; i < 200 && groupAlive(pid); i++) await sleep(50);
  if (groupAlive(pid)) signal('SIGKILL');
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** What to start: `command args` in `cwd` with `env` (the port is added as `PORT`). */
interface StartCommand {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

async function measureStart(
  label: string,
  start: StartCommand,
  addCleanup: (label: string, run: () => Promise<void>) => void,
): Promise<IdleStart> {
  const port = await freePort();
  const t0 = performance.now();
  // Its own process group, so that npm, the shell and the service are stopped together.
  const child = spawn(start.command, start.args, {
    cwd: start.cwd,
    env: { ...start.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const name = [start.command, ...start.args].join(' ');
  addCleanup(`${name} (${label})`, () => stopGroup(child));
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  try {
    let healthS: number | undefined;
    let slowestProbeMs = 0;
    while (healthS === undefined) {
      if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}):\n${output}`);
      if (performance.now() - t0 > START_TIMEOUT_MS) throw new Error(`${name}: no /health ok:\n${output}`);
      try {
        const sent = performance.now();
        const r = await fetch(`http://127.0.0.1:${port}/health`);
        await r.arrayBuffer();
        slowestProbeMs = Math.max(slowestProbeMs, performance.now() - sent);
        if (r.ok) healthS = (performance.now() - t0) / 1000;
      } catch {
        // Not listening yet.
      }
      if (healthS === undefined) await sleep(HEALTH_POLL_MS);
    }
    const pid = child.pid as number;
    const settled = performance.now();
    const samples: number[] = [];
    while (performance.now() - settled < IDLE_LIMIT_MS) {
      samples.push(treeRss(pid));
      const last = samples.slice(-STABLE_SAMPLES);
      if (last.length === STABLE_SAMPLES && Math.max(...last) - Math.min(...last) < STABLE_MB) break;
      await sleep(SAMPLE_MS);
    }
    const settleS = (performance.now() - settled) / 1000;
    const processes = processTree(pid)
      .map(readProcess)
      .filter((p): p is IdleProcess => p !== undefined);
    return {
      label,
      healthS,
      slowestProbeMs,
      settleS,
      processes,
      rssMB: processes.reduce((s, p) => s + p.rssMB, 0),
      pssMB: processes.reduce((s, p) => s + p.pssMB, 0),
    };
  } finally {
    await stopGroup(child);
  }
}

async function measurePart(
  root: string,
  node: string,
  nodeArgs: string[],
  scriptEnv: Record<string, string>,
  label: string,
  part: IdlePart,
): Promise<IdlePartResult> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `notary-idle-${part}-`));
  try {
    console.log(`[bench] idle part ${label}`);
    const r = await runCommand(node, [...nodeArgs, 'test/bench/idle-part.ts', part, dir], {
      cwd: root,
      // The start script's variables too (its malloc settings): each part is measured as `npm start` runs it.
      env: { ...process.env, ...scriptEnv, LOG_LEVEL: 'silent' },
      timeoutMs: START_TIMEOUT_MS,
    });
    const line = r.stdout
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .pop();
    if (r.code !== 0 || !line) throw new Error(`idle part ${part} failed (${r.code}):\n${r.stderr}`);
    const out = JSON.parse(line) as { loaded: IdleSnapshot; running: IdleSnapshot; startMs: number };
    return { label, part, nodeArgs, ...out };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Each part alone in its own process (`idle-part.ts`), and the restart's tree broken down by part. */
async function measureParts(
  options: { root: string; node: string },
  nodeArgs: string[],
  scriptEnv: Record<string, string>,
  again: IdleStart,
): Promise<{ parts: IdlePartResult[]; breakdown: IdleBreakdownRow[] }> {
  const run = (label: string, part: IdlePart, extra: string[] = []) =>
    measurePart(options.root, options.node, [...extra, ...nodeArgs], scriptEnv, label, part);
  const loader = await run('Node + tsx loader', 'loader');
  const modules = await run('service modules', 'modules');
  const pglite = await run('PGlite', 'pglite');
  const liftoff = await run('PGlite, --liftoff-only', 'pglite', ['--liftoff-only']);
  const evm = await run('EVM devnet (Hardhat, EDR; started on first use: not in the idle service)', 'evm');
  const stacks = await run('Clarity VM devnet (started on first use: not in the idle service)', 'stacks');
  const service = await run('whole service in one process', 'service');
  const parts = [loader, modules, pglite, liftoff, evm, stacks, service];

  const started = (p: IdlePartResult): IdleBreakdownRow => ({
    label: `${p.label}, started (over its modules)`,
    rssMB: p.running.rss - p.loaded.rss,
    pssMB: p.running.pss - p.loaded.pss,
  });
  // The service is the node process running main.ts; npm, its shell and helpers (esbuild) are the others.
  const others = again.processes.filter(
    (p) => !(/^\S*node /.test(p.command) && p.command.includes('server/src/main.ts')),
  );
  const breakdown: IdleBreakdownRow[] = [
    {
      label: `other processes of the tree (${others.map((p) => p.command.split(' ')[0]?.split('/').pop()).join(', ')})`,
      rssMB: others.reduce((s, p) => s + p.rssMB, 0),
      pssMB: others.reduce((s, p) => s + p.pssMB, 0),
    },
    { label: 'Node + tsx loader', rssMB: loader.running.rss, pssMB: loader.running.pss },
    {
      label: 'service module graph (over Node + loader)',
      rssMB: modules.running.rss - loader.running.rss,
      pssMB: modules.running.pss - loader.running.pss,
    },
    started(pglite),
    started(evm),
    started(stacks),
  ];
  return { parts, breakdown };
}

/** Runs both starts and every part (`startsOnly`: the starts alone); throws when one fails. */
export async function benchIdle(options: {
  root: string;
  node: string;
  addCleanup: (label: string, run: () => Promise<void>) => void;
  /** Only `npm start`'s two starts: no production shape, no parts (a smoke run). */
  startsOnly?: boolean;
}): Promise<IdleResults> {
  const {
    text: startScript,
    nodeArgs,
    env: scriptEnv,
  } = nodeScript(options.root, 'start', 'server/src/main.ts');
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-idle-'));
  options.addCleanup('idle DATA_DIR', () => rm(dataDir, { recursive: true, force: true }));
  const npmStart: StartCommand = {
    command: 'npm',
    args: ['start'],
    cwd: options.root,
    env: { ...process.env, DATA_DIR: dataDir },
  };
  console.log('npm start: first start on an empty DATA_DIR');
  const first = await measureStart('first start (empty DATA_DIR)', npmStart, options.addCleanup);
  console.log('npm start: restart on the same DATA_DIR');
  const again = await measureStart('restart', npmStart, options.addCleanup);
  const production: ProductionShape = options.startsOnly
    ? { skipped: '--starts-only' }
    : await measureProductionShape(options);

  const { parts, breakdown } = options.startsOnly
    ? { parts: [], breakdown: [] }
    : await measureParts(options, nodeArgs, scriptEnv, again);
  const idleRssMB = again.rssMB;
  const prodFirst = 'starts' in production ? production.starts[0] : undefined;
  const prodAgain = 'starts' in production ? production.starts[1] : undefined;
  return {
    startScript,
    starts: [first, again],
    production,
    parts,
    breakdown,
    summary: {
      firstStartS: first.healthS,
      restartS: again.healthS,
      idleRssMB,
      idlePssMB: again.pssMB,
      rssGoalMB: IDLE_GOALS.rssMB,
      rssGoalMet: idleRssMB < IDLE_GOALS.rssMB,
      firstStartRssMB: first.rssMB,
      firstStartRssGoalMB: IDLE_GOALS.firstStartRssMB,
      firstStartRssGoalMet: first.rssMB < IDLE_GOALS.firstStartRssMB,
      startGoalsMet: first.healthS < IDLE_GOALS.firstStartS && again.healthS < IDLE_GOALS.restartS,
      probeGoalMet: Math.max(first.slowestProbeMs, again.slowestProbeMs) < IDLE_GOALS.probeMs,
      productionFirstS: prodFirst?.healthS ?? null,
      productionRestartS: prodAgain?.healthS ?? null,
      productionRssMB: prodAgain?.rssMB ?? null,
      productionGoalsMet: prodAgain
        ? prodAgain.healthS < IDLE_GOALS.productionRestartS && prodAgain.rssMB < IDLE_GOALS.productionRssMB
        : null,
    },
  };
}

/**
 * The production shape (3. in the file's comment): builds the service, starts its loopback stand-ins, then the
 * built service twice on the same database and bucket.
 */
async function measureProductionShape(options: {
  root: string;
  node: string;
  addCleanup: (label: string, run: () => Promise<void>) => void;
}): Promise<ProductionShape> {
  if (!radosgwAvailable()) return { skipped: 'radosgw is not installed (bash .ci/install-radosgw.sh)' };
  console.log('[bench] production shape: building server/dist, starting PostgreSQL database, S3 and chains');
  await buildServer();
  const standIns = await startProductionStandIns({ publicUrl: 'http://notary.bench' });
  options.addCleanup('production shape: stand-ins', () => standIns.stop());
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-idle-prod-'));
  const compileCache = await mkdtemp(path.join(os.tmpdir(), 'notary-idle-compile-cache-'));
  options.addCleanup('production shape: directories', async () => {
    await rm(dataDir, { recursive: true, force: true });
    await rm(compileCache, { recursive: true, force: true });
  });
  const script = nodeScript(options.root, 'start:production', 'server/dist/main.mjs');
  const start: StartCommand = {
    command: options.node,
    args: [...script.nodeArgs, script.entry],
    cwd: options.root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...standIns.env,
      ...script.env,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      NODE_COMPILE_CACHE: compileCache,
      DATA_DIR: dataDir,
    },
  };
  console.log('[bench] production shape, first start (empty database and compile cache)');
  const first = await measureStart('production shape, first start', start, options.addCleanup);
  console.log('[bench] production shape, restart');
  const again = await measureStart('production shape, restart', start, options.addCleanup);
  return { starts: [first, again], command: script.text };
}

/** The table of starts: header and one row each, `/health` times with `digits` decimals. */
function startRows(starts: readonly IdleStart[], digits: number): string[] {
  const f = (n: number) => n.toFixed(0);
  return [
    '| start | to /health ok (s) | slowest probe (ms) | settled after (s) | idle RSS (MB) | idle PSS (MB) |',
    '| --- | --- | --- | --- | --- | --- |',
    ...starts.map(
      (st) =>
        `| ${st.label} | ${st.healthS.toFixed(digits)} | ${f(st.slowestProbeMs)} | ${st.settleS.toFixed(1)} | ${f(st.rssMB)} | ${f(st.pssMB)} |`,
    ),
  ];
}

function productionLines(p: ProductionShape, met: boolean | null): string[] {
  if ('skipped' in p) return [`Production shape: not measured (${p.skipped}).`, ''];
  return [
    `Production shape (\`${p.command}\`; PostgreSQL, S3, configured chains on loopback stand-ins):`,
    '',
    ...startRows(p.starts, 2),
    `| goal (restart) | < ${IDLE_GOALS.productionRestartS} | < ${IDLE_GOALS.probeMs} | | < ${IDLE_GOALS.productionRssMB} ${met ? '✅' : '❌'} | |`,
    '',
  ];
}

/** The results as markdown tables. */
export function reportIdle(r: IdleResults): string {
  const f = (n: number) => n.toFixed(0);
  const s = r.summary;
  const lines = [
    `Memory and start-up of \`npm start\` (\`${r.startScript}\`), embedded defaults, all processes counted:`,
    '',
    ...startRows(r.starts, 1),
    `| goal | < ${IDLE_GOALS.firstStartS} first, < ${IDLE_GOALS.restartS} restart ${s.startGoalsMet ? '✅' : '❌'} | < ${IDLE_GOALS.probeMs} ${s.probeGoalMet ? '✅' : '❌'} | | < ${s.firstStartRssGoalMB} first ${s.firstStartRssGoalMet ? '✅' : '❌'}, < ${s.rssGoalMB} restart ${s.rssGoalMet ? '✅' : '❌'} | |`,
    '',
    ...productionLines(r.production, s.productionGoalsMet),
    '| process (restart) | RSS (MB) | PSS (MB) |',
    '| --- | --- | --- |',
    ...(r.starts.at(-1)?.processes ?? []).map((p) => `| \`${p.command}\` | ${f(p.rssMB)} | ${f(p.pssMB)} |`),
    '',
  ];
  if (r.parts.length === 0) return lines.join('\n');
  lines.push(
    '| part, each alone | RSS (MB) | PSS (MB) |',
    '| --- | --- | --- |',
    ...r.breakdown.map((b) => `| ${b.label} | ${f(b.rssMB)} | ${f(b.pssMB)} |`),
    '',
    '| process of one part, idle | RSS (MB) | heap used / total (MB) | external (MB) | array buffers (MB) | start (ms) |',
    '| --- | --- | --- | --- | --- | --- |',
    ...r.parts.map(
      (p) =>
        `| ${p.label} | ${f(p.running.rss)} | ${f(p.running.heapUsed)} / ${f(p.running.heapTotal)} | ` +
        `${f(p.running.external)} | ${f(p.running.arrayBuffers)} | ${f(p.startMs)} |`,
    ),
  );
  return lines.join('\n');
}
