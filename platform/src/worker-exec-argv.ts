import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { runsFromSource } from '@notary/shared/module-entry';

/**
 * The `execArgv` of a worker thread whose entry is `entry` (see `moduleEntry`): tsx's loader when it is a
 * TypeScript file (the service runs from its sources: `npm start`, the CLI, the tests), nothing when it is the
 * built service's `.mjs`. The caller's own flags (vitest's, tsx's CLI) are not inherited, so one rule holds
 * under all of them.
 * `erasableOnly`: the entry and everything it imports from this repository use only type syntax Node strips
 * itself (no parameter properties or enums, `.ts` extensions on relative imports): Node runs it without
 * tsx where it strips types (Node 22.18 and later), which saves the thread tsx's memory.
 */
export function workerExecArgv(entry: URL, options: { erasableOnly?: boolean } = {}): string[] {
  if (!runsFromSource(entry.pathname)) return [];
  if (options.erasableOnly && process.features.typescript) return [];
  return ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href];
}

/**
 * V8 heap limits of a long-lived worker thread that keeps little JavaScript state (its work is WebAssembly or
 * native): a young generation of 8 MB instead of V8's default, whose unused reserve each thread would
 * otherwise keep resident.
 */
export const SMALL_WORKER_HEAP = { maxYoungGenerationSizeMb: 8 } as const;
