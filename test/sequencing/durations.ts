import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { DURATIONS_FILE } from './sequencer';

/**
 * `npm run test:durations -- <report.json>`: records each test file's seconds from a vitest JSON report of a
 * full run (`npx vitest run --reporter=default --reporter=json --outputFile=<report.json>`) into durations.json,
 * which orders the next runs longest first (sequencer.ts). Run it on a quiet machine after the suite changed
 * shape; the order only needs the files' relative times.
 */
const Report = z.object({
  testResults: z.array(z.object({ name: z.string(), startTime: z.number(), endTime: z.number() })),
});

const file = process.argv[2];
if (!file) throw new Error('usage: npm run test:durations -- <vitest JSON report>');
const report = Report.parse(JSON.parse(readFileSync(file, 'utf8')));
// The run's checkout (another clone, say): the directory every test file is under.
const root = report.testResults
  .map((r) => path.dirname(r.name))
  .reduce((common, dir) => {
    while (!`${dir}/`.startsWith(`${common}/`)) common = path.dirname(common);
    return common;
  });
const seconds = Object.fromEntries(
  report.testResults
    .map((r) => [path.relative(root, r.name), Math.round((r.endTime - r.startTime) / 100) / 10] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1)),
);
writeFileSync(DURATIONS_FILE, `${JSON.stringify(seconds, null, 2)}\n`);
console.log(`${Object.keys(seconds).length} files recorded in ${path.relative(root, DURATIONS_FILE)}`);
