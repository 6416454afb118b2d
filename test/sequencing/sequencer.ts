import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * The suite's file order: longest first, from the seconds each file took in a recorded full run
 * (`durations.json` beside this file, written by `npm run test:durations`). The suite runs on a few workers; a
 * long file started last keeps one worker busy after the others are done, and vitest's own order on a fresh
 * clone (no cache of earlier runs) is by file size, which says little of a file's time (a short chaos test
 * restarts a service four times). Files the table does not know (new ones) run first, as vitest runs files it
 * has no results for; among themselves they keep vitest's order.
 */
export const DURATIONS_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'durations.json');

function recordedDurations(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}

export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = recordedDurations();
    const root = this.ctx.config.root;
    const known = (f: TestSpecification) => seconds[path.relative(root, f.moduleId)];
    const base = await super.sort(files);
    const unknown = base.filter((f) => known(f) === undefined);
    const timed = base.filter((f) => known(f) !== undefined);
    timed.sort((a, b) => (known(b) ?? 0) - (known(a) ?? 0));
    return [...unknown, ...timed];
  }
}
