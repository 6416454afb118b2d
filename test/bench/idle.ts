/**
 * Memory and start-up part of `npm run bench` (alone: `npm run bench -- idle`, results printed only).
 *
 * 1. `npm start` itself, on the embedded defaults (PGlite, fs storage, both devnets), all processes counted:
 *    `npm start` is spawned in its own process group with a temp `DATA_DIR` and a free `PORT`; start-up time
 *    runs from the spawn to the first `GET /health` answering 200 (polled every 50 ms). Then the tree is left
 *    idle until its total RSS is stable (`STABLE_MB` over `STABLE_SAMPLES` samples 500 ms apart: background
 *    WebAssembly compilation done) and each process's `VmRSS` and PSS (`/proc/<pid>/smaps_rollup`: shared pages
 *    divided among their users, the honest sum) are read. Twice: a first start on the empty `DATA_DIR`
 *    (initdb and every migration included) and a restart on the same one. Goal: idle RSS under 400 MB.
 * 2. The breakdown: each part alone in its own process (`idle-part.ts`), with the node flags of the start
 *    script, its memory read once its modules are loaded and again once it runs (both idle): Node with the tsx
 *    loader, the service's module graph, PGlite opened and migrated, the Hardhat (EDR) devnet, the Clarity VM
 *    devnet, and the whole service started in-process (`process.memoryUsage()`: heap, external, array buffers).
 *    PGlite is also measured with `--liftoff-only`, to show what V8's optimized WebAssembly code costs.
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
import type { IdlePart, IdleSnapshot } from './idle-part';
import { freePort, runCommand } from './lib';

export const IDLE_GOALS = { rssMB: 400 };
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

export interface IdleResults {
  startScript: string;
  starts: IdleStart[];
  parts: IdlePartResult[];
  breakdown: IdleBreakdownRow[];
  summary: {
    firstStartS: number;
    restartS: number;
    idleRssMB: number;
    idlePssMB: number;
    rssGoalMB: number;
    rssGoalMet: boolean;
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

async function measureStart(
  label: string,
  root: string,
  dataDir: string,
  addCleanup: (label: string, run: () => Promise<void>) => void,
): Promise<IdleStart> {
  const port = await freePort();
  const t0 = performance.now();
  // Its own process group, so that npm, the shell and the service are stopped together.
  const child = spawn('npm', ['start'], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  addCleanup(`npm start (${label})`, () => stopGroup(child));
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  try {
    let healthS: number | undefined;
    while (healthS === undefined) {
      if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode}):\n${output}`);
      if (performance.now() - t0 > START_TIMEOUT_MS) throw new Error(`npm start: no /health ok:\n${output}`);
      try {
        const r = await fetch(`http://127.0.0.1:${port}/health`);
        await r.arrayBuffer();
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
  label: string,
  part: IdlePart,
): Promise<IdlePartResult> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `notary-idle-${part}-`));
  try {
    console.log(`[bench] idle part ${label}`);
    const r = await runCommand(node, [...nodeArgs, 'test/bench/idle-part.ts', part, dir], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: 'silent' },
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

/**
 * The node arguments of the start script (`node <args> server/src/main.ts`), for the parts to run as the
 * service does. @throws Error when the script is not of that form.
 */
function startNodeArgs(script: string): string[] {
  const words = script.trim().split(/\s+/);
  if (words[0] !== 'node' || words.at(-1) !== 'server/src/main.ts') {
    throw new Error(`the start script is not "node <args> server/src/main.ts": ${script}`);
  }
  return words.slice(1, -1);
}

/** Runs both starts and every part; throws when one fails. */
export async function benchIdle(options: {
  root: string;
  node: string;
  addCleanup: (label: string, run: () => Promise<void>) => void;
}): Promise<IdleResults> {
  const pkg = JSON.parse(readFileSync(path.join(options.root, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  const startScript = pkg.scripts.start ?? '';
  const nodeArgs = startNodeArgs(startScript);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-idle-'));
  options.addCleanup('idle DATA_DIR', () => rm(dataDir, { recursive: true, force: true }));
  console.log('[bench] npm start, first start on an empty DATA_DIR');
  const first = await measureStart('first start (empty DATA_DIR)', options.root, dataDir, options.addCleanup);
  console.log('[bench] npm start, restart on the same DATA_DIR');
  const again = await measureStart('restart', options.root, dataDir, options.addCleanup);

  const run = (label: string, part: IdlePart, extra: string[] = []) =>
    measurePart(options.root, options.node, [...extra, ...nodeArgs], label, part);
  const loader = await run('Node + tsx loader', 'loader');
  const modules = await run('service modules', 'modules');
  const pglite = await run('PGlite', 'pglite');
  const liftoff = await run('PGlite, --liftoff-only', 'pglite', ['--liftoff-only']);
  const evm = await run('EVM devnet (Hardhat, EDR)', 'evm');
  const stacks = await run('Clarity VM devnet', 'stacks');
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
  const idleRssMB = again.rssMB;
  return {
    startScript,
    starts: [first, again],
    parts,
    breakdown,
    summary: {
      firstStartS: first.healthS,
      restartS: again.healthS,
      idleRssMB,
      idlePssMB: again.pssMB,
      rssGoalMB: IDLE_GOALS.rssMB,
      rssGoalMet: idleRssMB < IDLE_GOALS.rssMB,
    },
  };
}

/** The results as markdown tables. */
export function reportIdle(r: IdleResults): string {
  const f = (n: number) => n.toFixed(0);
  const s = r.summary;
  const lines = [
    `Memory and start-up of \`npm start\` (\`${r.startScript}\`), embedded defaults, all processes counted:`,
    '',
    '| start | to /health ok (s) | settled after (s) | idle RSS (MB) | idle PSS (MB) |',
    '| --- | --- | --- | --- | --- |',
    ...r.starts.map(
      (st) =>
        `| ${st.label} | ${st.healthS.toFixed(1)} | ${st.settleS.toFixed(1)} | ${f(st.rssMB)} | ${f(st.pssMB)} |`,
    ),
    `| goal (restart) | | | < ${s.rssGoalMB} ${s.rssGoalMet ? '✅' : '❌'} | |`,
    '',
    '| process (restart) | RSS (MB) | PSS (MB) |',
    '| --- | --- | --- |',
    ...(r.starts.at(-1)?.processes ?? []).map((p) => `| \`${p.command}\` | ${f(p.rssMB)} | ${f(p.pssMB)} |`),
    '',
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
  ];
  return lines.join('\n');
}
