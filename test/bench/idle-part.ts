/**
 * One part of the memory breakdown of `npm run bench` (`idle.ts`), alone in this process:
 * `node --import tsx test/bench/idle-part.ts <part> <dir>`, `dir` an empty temp directory for its data.
 * It loads the part's modules, waits until the process is idle (RSS stable), measures, then starts the part,
 * waits for idle again and measures; prints one JSON line `{ part, loaded, running, startMs }`
 * (`IdleSnapshot`s, MB). Parts:
 * - `loader`: nothing more than Node and the tsx loader (the floor of every part);
 * - `modules`: the service's module graph (`server/src/bootstrap.ts` and what it imports), nothing started;
 * - `pglite`: the embedded database opened and migrated as the service does (`openDatabase`);
 * - `evm`: the Hardhat devnet with EAS deployed (`startHardhatDevnet`);
 * - `stacks`: the Clarity VM devnet with the notary contract (`startStacksDevnet`);
 * - `service`: the whole service as `npm start` runs it (`startService` on the embedded defaults, port 0).
 * The process exits once it has printed; its caller keeps the figures.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';

/** Memory of this process at one moment, MB (MiB); `rss` and `pss` from `/proc/self`. */
export interface IdleSnapshot {
  rss: number;
  /** Proportional set size: shared pages divided among the processes mapping them. */
  pss: number;
  heapUsed: number;
  heapTotal: number;
  /** C++ objects bound to JS objects, WebAssembly memories included. */
  external: number;
  arrayBuffers: number;
}

export const IDLE_PARTS = ['loader', 'modules', 'pglite', 'evm', 'stacks', 'service'] as const;
export type IdlePart = (typeof IDLE_PARTS)[number];

const MiB = 1024 * 1024;
const SAMPLE_MS = 500;
/** Idle: RSS within `STABLE_MB` over the last `STABLE_SAMPLES` samples (background compilation done). */
const STABLE_SAMPLES = 8;
const STABLE_MB = 3;
const IDLE_LIMIT_MS = 90_000;

// A full collection before each reading: the figures are what the part keeps, not garbage awaiting the GC.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

function kB(text: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(text);
  return m?.[1] ? Number(m[1]) / 1024 : 0;
}

function snapshot(): IdleSnapshot {
  gc();
  const m = process.memoryUsage();
  return {
    rss: m.rss / MiB,
    pss: kB(readFileSync('/proc/self/smaps_rollup', 'utf8'), 'Pss'),
    heapUsed: m.heapUsed / MiB,
    heapTotal: m.heapTotal / MiB,
    external: m.external / MiB,
    arrayBuffers: m.arrayBuffers / MiB,
  };
}

/** Resolves once RSS has stayed within `STABLE_MB` for `STABLE_SAMPLES` samples (or after the limit). */
async function idle(): Promise<void> {
  const samples: number[] = [];
  const limit = Date.now() + IDLE_LIMIT_MS;
  while (Date.now() < limit) {
    samples.push(process.memoryUsage.rss() / MiB);
    const last = samples.slice(-STABLE_SAMPLES);
    if (last.length === STABLE_SAMPLES && Math.max(...last) - Math.min(...last) < STABLE_MB) return;
    await sleep(SAMPLE_MS);
  }
}

async function load(part: IdlePart, dir: string): Promise<() => Promise<unknown>> {
  switch (part) {
    case 'loader':
      return async () => undefined;
    case 'modules': {
      await import('../../server/src/bootstrap');
      return async () => undefined;
    }
    case 'pglite': {
      const { openDatabase } = await import('../../server/src/db');
      return () => openDatabase({ databaseUrl: undefined, dataDir: dir });
    }
    case 'evm': {
      const { startHardhatDevnet } = await import('../../server/src/adapters/chains/hardhat-devnet');
      return () => startHardhatDevnet({ chainId: 31337 });
    }
    case 'stacks': {
      const { startStacksDevnet } = await import('../../server/src/adapters/chains/devnets/stacks-devnet');
      return () => startStacksDevnet();
    }
    case 'service': {
      const { startService } = await import('../../server/src/bootstrap');
      const { loadConfig } = await import('../../server/src/config');
      return () =>
        startService(loadConfig({ ...process.env, DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'silent' }));
    }
  }
}

async function main(): Promise<void> {
  const [part, dir] = process.argv.slice(2) as [IdlePart | undefined, string | undefined];
  if (!part || !IDLE_PARTS.includes(part) || !dir) {
    throw new Error(`usage: idle-part.ts <${IDLE_PARTS.join('|')}> <empty dir>`);
  }
  const start = await load(part, dir);
  await idle();
  const loaded = snapshot();
  const t0 = performance.now();
  await start();
  const startMs = performance.now() - t0;
  await idle();
  const running = snapshot();
  console.log(JSON.stringify({ part, loaded, running, startMs }));
  process.exit(0);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? (e.stack ?? e.message) : String(e));
  process.exit(1);
});
