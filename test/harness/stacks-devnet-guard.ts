/**
 * Test setup (vitest `setupFiles`): every Stacks devnet a test starts, in-process or in the service's worker
 * thread, holds its answers to the pinned schemas (stacks-schemas.ts, named by `STACKS_DEVNET_SCHEMAS`), and
 * any answer that broke them fails the test that was running, with the violations. A test that provokes
 * violations on purpose takes them with the devnet's `takeViolations()`.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach } from 'vitest';

process.env.STACKS_DEVNET_SCHEMAS ??= fileURLToPath(new URL('./stacks-schemas.ts', import.meta.url));

const VIOLATIONS = Symbol.for('notary.stacks-devnet.violations');

function failOnViolations(): void {
  const g = globalThis as { [VIOLATIONS]?: { devnet: string; text: string }[] };
  const found = g[VIOLATIONS]?.splice(0) ?? [];
  if (found.length > 0) {
    throw new Error(
      `the Stacks devnet gave ${found.length} answer(s) outside the published schemas:\n${found.map((v) => v.text).join('\n')}`,
    );
  }
}

afterEach(failOnViolations);
afterAll(failOnViolations);
