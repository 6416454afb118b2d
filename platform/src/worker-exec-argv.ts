import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

/**
 * The `execArgv` of a worker thread whose entry is a TypeScript file: tsx's loader (the services run from
 * source under tsx, in development, tests and production alike). The caller's own flags (vitest's, tsx's
 * CLI) are not inherited, so one rule holds under `npm start`, the CLI and the tests.
 */
export function typescriptWorkerExecArgv(): string[] {
  return ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href];
}
