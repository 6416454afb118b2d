/**
 * The benches run end to end on a small input and print their tables, so that they cannot rot. Timings are
 * not judged here (the machine is shared): only that each bench finishes and prints its table's header and a
 * row per case. The time limits only catch a hang: on a quiet machine each bench takes well under a minute,
 * under a heavy shared load several.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCommand } from '../bench/lib';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NODE = path.join(ROOT, 'node_modules', '.bin', 'node');
const SMALL_PDF = path.resolve(ROOT, '../shared/fixtures/pdfs/alphatrans.pdf');

/** `npm run bench -- <args>` as its script runs it; rejects on a non-zero exit with the output. */
async function bench(args: string[], timeoutMs: number): Promise<string> {
  const r = await runCommand(NODE, ['--import', 'tsx', 'test/bench/run.ts', ...args], {
    cwd: ROOT,
    timeoutMs,
  });
  if (r.code !== 0) throw new Error(`bench ${args.join(' ')} exited ${r.code}:\n${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

describe('benches, smoke', () => {
  it('certificate: ours and @libpdf/core at B-LTA, one run each on a 1-page PDF', async () => {
    const out = await bench(['certificate', '--runs', '1', '--pdf', SMALL_PDF], 590_000);
    expect(out).toMatch(/Certificate B-LTA, .*alphatrans\.pdf .*load average/);
    expect(out).toContain('| B-LTA (median of 1) | time (ms) |');
    expect(out).toContain('| CPU (ms) | CPU ratio |');
    expect(out).toMatch(/\| ours: signing stage \(signAtLevel\) \| \d+ \|/);
    expect(out).toMatch(/\| @libpdf\/core: load \+ sign B-LTA \| \d+ \|/);
    expect(out).toMatch(/\| ours: whole certificate \(render \+ sign\) \| \d+ \|/);
    expect(out).toMatch(/Signing stage ratio \(ours \/ @libpdf\/core\) \d+\.\d\d/);
  }, 600_000);

  it('http: one 2 MB upload round to the receiver and the service, then verify against bare Express for 2 s, on one service', async () => {
    const out = await bench(
      ['http', '--uploads', '1', '--mb', '2', '--runs', '1', '--seconds', '2'],
      590_000,
    );
    expect(out).toMatch(/Notary bench, .*load average/);
    expect(out).toMatch(
      /\| ingest ratio \(receiver time \/ service time, same round\), median of 1 \(min–max\) \| \d+\.\d\d/,
    );
    expect(out).toContain("| upload stage (service's Server-Timing), median of 1 | ms |");
    for (const stage of [
      'session token checked',
      'quota check (early)',
      '↳ SHA-256',
      '↳ anchoring enqueue',
      '↳ commit',
    ]) {
      expect(out).toMatch(new RegExp(`\\| ${stage.replace(/[()]/g, '\\$&')} \\| \\d+\\.\\d \\|`));
    }
    expect(out).toMatch(
      /\| verify rps, known hash \(service \/ bare \/ ratio\), median of 1 rounds \| \d+ \/ \d+ \/ \d+\.\d\d/,
    );
    expect(out).toMatch(
      /\| verify p99 ms, known hash \(service \/ bare \/ ratio\), median of 1 rounds \| \d+ \/ \d+ \/ /,
    );
    expect(out).toMatch(
      /\| server CPU µs per request \(known \/ unknown \/ bare; known \/ bare\), median of 1 rounds \| \d+/,
    );
    expect(out).toContain('| verify non-2xx (service / bare) | 0 / 0 | 0 |');
  }, 600_000);

  it('idle: npm start on the embedded defaults, a first start and a restart, with each process of the tree', async () => {
    const out = await bench(['idle', '--starts-only'], 590_000);
    expect(out).toContain('Memory and start-up of `npm start`');
    expect(out).toMatch(/\| first start \(empty DATA_DIR\) \| \d+\.\d \|/);
    expect(out).toMatch(/\| restart \| \d+\.\d \|/);
    expect(out).toContain('Production shape: not measured (--starts-only).');
    // The service's own line (a long command is cut at 80 characters with "...").
    expect(out).toMatch(/\| `node --optimize-for-size [^`]*` \| \d+ \|/);
  }, 600_000);

  it('capture: ours and a bare Playwright capture of the loopback page, one round, with each stage of ours', async () => {
    const out = await bench(['capture', '--runs', '1'], 590_000);
    expect(out).toMatch(/Capture, .*loopback page .*load average/);
    expect(out).toContain('| capture (median of 1) | time (ms) |');
    expect(out).toMatch(/\| ours: capture process, WACZ, provenance, signature \| \d+ \|/);
    expect(out).toMatch(/\| bare Playwright: launch, goto, full-page screenshot \| \d+ \|/);
    for (const stage of [
      'capture process',
      '↳ navigate',
      '↳ screenshot',
      '↳ PDF',
      '↳ WARC writing',
      'WACZ packing',
    ]) {
      expect(out).toMatch(new RegExp(`\\| ${stage} \\| \\d+ \\| \\d+–\\d+ \\| \\d+ % \\|`));
    }
    expect(out).toMatch(/\| ↳ provenance \| \d+ \|/);
    expect(out).toMatch(/\| ↳ signing \| \d+ \|/);
    expect(out).toMatch(/Capture ratio \(ours \/ bare, medians\) \d+\.\d\d/);
  }, 600_000);
});
