import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Child, nodeScript, startChild } from '../bench/lib';

/** The repository's root: the working directory of `npm start`. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The project's Node (the `node` devDependency, 24). */
export const NODE = path.join(ROOT, 'node_modules', '.bin', 'node');

/**
 * The service as `npm start` runs it (the start script's variables, Node flags and entry), in a process of its own on
 * 127.0.0.1:`port`, its embedded defaults under `dataDir` (PGlite, files, both devnets), `env` added to this
 * process's environment. Wait for it with `waitForLine(/\[notary\] listening on/)`.
 */
export function startNpmStart(dataDir: string, port: number, env: NodeJS.ProcessEnv = {}): Child {
  const script = nodeScript(ROOT, 'start', 'server/src/main.ts');
  return startChild('notary', NODE, [...script.nodeArgs, script.entry], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...script.env,
      NODE_ENV: undefined,
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      ...env,
    },
  });
}

/**
 * A loop that keeps one CPU busy and ends itself once its parent is gone: a test worker that dies (a crash, a
 * killed run) never leaves a burner behind to slow every later test.
 */
const BURN_UNTIL_ORPHANED =
  'const parent = process.ppid; for (let i = 0; ; i++) if ((i & 0xfffff) === 0 && process.ppid !== parent) process.exit(0);';

/** `count` processes that each keep one CPU busy (a loaded machine), until `stop` or until this process ends. */
export function startCpuBurners(count: number): Child[] {
  return Array.from({ length: count }, (_, i) =>
    startChild(`cpu-${i}`, NODE, ['-e', BURN_UNTIL_ORPHANED], { cwd: ROOT, env: {} }),
  );
}
