/**
 * `npm run bench -- tlog [--leaves N]` (default 1,000,000): the transparency log at scale on the embedded database
 * (PGlite in memory). N pending entries are written by SQL (what N notarizations leave), the sequencer integrates
 * them (batches of 4,096, one checkpoint each), then: the time of an inclusion proof for random leaves (as a receipt
 * asks it), of serving a level-0 tile, a partial tile and an entry bundle, and of integrating one more entry (what
 * an upload costs the sequencer) at 1,000, 100,000 and N leaves, wall clock and CPU (the latter holds on a
 * loaded machine). Printed; `results.json` is left as it is.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { fileLogSigner } from '@notary/server/adapters/log-key/file';
import { openDatabase } from '@notary/server/db/index';
import { TransparencyLog } from '@notary/server/domain/log/transparency-log';
import { leafHash, verifyInclusion } from '@notary/trust/tlog';

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
/** The middle of three timings (the embedded database runs in this process: its CPU time is ours). */
const median = (values: number[]) => [...values].sort((a, b) => a - b)[1] ?? 0;

/** Runs the bench (see the module comment) and prints its figures. */
export async function benchTransparencyLog(argv: string[]): Promise<void> {
  const { values } = parseArgs({ args: argv, options: { leaves: { type: 'string' } } });
  const leaves = Number(values.leaves ?? 1_000_000);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tlog-bench-'));
  const db = await openDatabase({ databaseUrl: undefined, dataDir: '', memory: true });
  try {
    const log = new TransparencyLog(
      () => db.fork(),
      await fileLogSigner(dir, 'bench.example/log'),
      'b'.repeat(40),
    );
    const sql = db.fork() as SqlEntityManager;
    let start = process.hrtime.bigint();
    let inserted = 0;
    let integrated = 0;
    let head = await log.integrate();
    // The log grown stage by stage, one more entry integrated (timed, median of 3) at each stage's size.
    const appendCost: string[] = [];
    for (const stage of [...new Set([1_000, 100_000, leaves].filter((n) => n <= leaves))]) {
      start = process.hrtime.bigint();
      await sql.execute(
        `insert into log_entry (document_id, entry, created_at)
         select gen_random_uuid(), convert_to(format(E'notary-log-leaf/1\\nserial BENCH-%s\\nsha256 %s\\ntime 2026-01-01T00:00:00.000Z\\ntenant %s\\n',
                  lpad(n::text, 10, '0'), encode(sha256(n::text::bytea), 'hex'), repeat('ab', 32)), 'UTF8'), now()
           from generate_series(?, ?) as n`,
        [head.size + 1, stage],
      );
      inserted += ms(start);
      start = process.hrtime.bigint();
      head = await log.integrate();
      integrated += ms(start);
      const times: number[] = [];
      const cpu: number[] = [];
      for (let i = 0; i < 3; i++) {
        await sql.execute(
          `insert into log_entry (document_id, entry, created_at) values (gen_random_uuid(), convert_to('one more', 'UTF8'), now())`,
        );
        start = process.hrtime.bigint();
        const cpu0 = process.cpuUsage();
        head = await log.integrate();
        times.push(ms(start));
        const used = process.cpuUsage(cpu0);
        cpu.push((used.user + used.system) / 1000);
      }
      appendCost.push(
        `${stage.toLocaleString('en')}: ${median(times).toFixed(1)} ms (${median(cpu).toFixed(1)} ms CPU)`,
      );
    }
    const ids: { document_id: string }[] = await sql.execute(
      'select document_id from log_entry where leaf_index in (0, ?, ?, ?)',
      [Math.floor(leaves / 3), Math.floor(leaves / 2), leaves - 1],
    );
    const proofTimes: number[] = [];
    for (const { document_id } of ids) {
      start = process.hrtime.bigint();
      const proof = await log.proofFor(document_id);
      proofTimes.push(ms(start));
      if (
        !proof ||
        !verifyInclusion(leafHash(proof.entry), proof.leafIndex, head.size, proof.proof, head.root)
      ) {
        throw new Error(`the proof of ${document_id} does not verify`);
      }
    }
    const timed = async (name: Parameters<TransparencyLog['tile']>[0]) => {
      const t0 = process.hrtime.bigint();
      const bytes = await log.tile(name);
      if (!bytes) throw new Error(`tile ${JSON.stringify(name)} not served`);
      return ms(t0);
    };
    const fullTile = await timed({ level: 0, index: 1000 % Math.max(1, Math.floor(leaves / 256)) });
    const partialWidth = leaves % 256;
    const partialTile =
      partialWidth > 0 ? await timed({ level: 0, index: Math.floor(leaves / 256), width: partialWidth }) : 0;
    const bundle = await timed({ level: 'entries', index: 0 });
    const rows = [
      ['leaves', String(head.size)],
      ['pending entries written by SQL', `${inserted.toFixed(0)} ms`],
      [
        'integration (tiles, indexes, checkpoints)',
        `${integrated.toFixed(0)} ms (${((integrated * 1000) / head.size).toFixed(1)} µs a leaf)`,
      ],
      ['inclusion proof (read tiles, build)', proofTimes.map((t) => `${t.toFixed(1)} ms`).join(', ')],
      ['full level-0 tile', `${fullTile.toFixed(1)} ms`],
      ['partial level-0 tile', `${partialTile.toFixed(1)} ms`],
      ['entry bundle (256 entries)', `${bundle.toFixed(1)} ms`],
      ['integrating one more entry, at each size', appendCost.join(', ')],
    ];
    console.log(
      `\n| transparency log | |\n|---|---|\n${rows.map(([k, v]) => `| ${k} | ${v} |`).join('\n')}\n`,
    );
  } finally {
    await db.close();
    await rm(dir, { recursive: true, force: true });
  }
}
