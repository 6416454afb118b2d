import os from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import LongestFirstSequencer from './test/sequencing/sequencer.ts';

// Every test file runs in a fresh process that loads the same modules again (about a sixth of the suite's time
// is imports): V8's compiled code is kept on disk and reused by each worker and each process a test starts
// (Node's module compile cache, keyed by each file's contents; a stale or damaged entry is recompiled).
process.env.NODE_COMPILE_CACHE ??= path.join(os.tmpdir(), 'notary-test-compile-cache');

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**', 'data/**'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // `expect.poll` waits for a condition, it does not time it: 1 s (the default) is too short on a busy machine.
    expect: { poll: { timeout: 30_000 } },
    // Suites start real servers (PGlite, PostgreSQL, radosgw); a few at a time keeps a 2-core machine responsive.
    maxWorkers: 3,
    // V8 can abort a process that makes and frees many PGlite WebAssembly instances ("Check failed:
    // jit_page_->allocations_.erase(addr) == 1" when freeing wasm code; an open Node/V8 bug seen with PGlite): the
    // test workers never garbage-collect wasm code, the path of that abort, and keep it until they exit.
    execArgv: ['--no-wasm-code-gc'],
    // Stacks devnets answer within the pinned stacks-core/Hiro schemas, or the test fails.
    setupFiles: ['test/harness/stacks-devnet-guard.ts'],
    // The migrated database templates the tests copy, built once before the workers start.
    globalSetup: ['test/harness/global-setup.ts'],
    // Longest files first (recorded durations): the last file to start is a short one.
    sequence: { sequencer: LongestFirstSequencer },
  },
});
