import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIOME = path.join(ROOT, 'node_modules/.bin/biome');

/** A function whose body spans `lines` lines (Biome counts the lines between the braces). */
function functionOfLines(lines: number): string {
  const body = Array.from({ length: lines - 2 }, (_, i) => `  x += ${i};`);
  return ['export function planted(): number {', '  let x = 0;', ...body, '  return x;', '}', ''].join('\n');
}

/**
 * The lint rule that keeps product functions short (`npm run lint`, Biome's `noExcessiveLinesPerFunction` at 150
 * lines, tests and test support exempt), tried on planted files under a copy of the project's `biome.json`: the
 * repository itself is never written while other suites read it.
 */
describe('lint: no product function over 150 lines', () => {
  let dir: string;
  /** Biome's output on the planted files (it exits non-zero when it finds an error). */
  const diagnostics = (): Promise<string> =>
    promisify(execFile)(BIOME, ['lint', '--max-diagnostics=50', 'server'], { cwd: dir }).then(
      (r) => r.stdout + r.stderr,
      (e: { stdout?: string; stderr?: string }) => `${e.stdout ?? ''}${e.stderr ?? ''}`,
    );

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'notary-lint-'));
    const config = JSON.parse(await readFile(path.join(ROOT, 'biome.json'), 'utf8')) as {
      vcs?: { enabled?: boolean };
    };
    // The copy lives outside the git checkout: no ignore file to read.
    config.vcs = { enabled: false };
    await writeFile(path.join(dir, 'biome.json'), JSON.stringify(config));
    await mkdir(path.join(dir, 'server/src'), { recursive: true });
    await writeFile(path.join(dir, 'server/src/long.ts'), functionOfLines(151));
    await writeFile(path.join(dir, 'server/src/fits.ts'), functionOfLines(150));
    await writeFile(path.join(dir, 'server/src/long.test.ts'), functionOfLines(151));
    await writeFile(path.join(dir, 'server/src/long.testing.ts'), functionOfLines(151));
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a 151-line product function fails; 150 lines pass; tests and test support are exempt', async () => {
    const out = await diagnostics();
    const flagged = [...out.matchAll(/^(\S+):\d+:\d+ lint\/complexity\/noExcessiveLinesPerFunction/gm)].map(
      (m) => m[1],
    );
    expect(flagged).toEqual(['server/src/long.ts']);
  });
});
