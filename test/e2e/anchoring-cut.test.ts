import { randomBytes } from 'node:crypto';
import type { DocumentDto } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATABASE_KINDS, startTestService, type TestService } from '../harness/service';

/**
 * Batches closed by count, so a burst of uploads is not split by the clock, through the real service (pg-boss on
 * the service's database, the in-process devnets): with `ANCHOR_BATCH_MAX` 5 and a window of an hour, only the
 * count can close a batch during the test. 2 × max uploads in quick succession take exactly 2 transactions per
 * chain; of 2 × max + 2, the 2 left stay pending until the window has passed (made to pass by moving their creation
 * time back).
 */

const MAX = 5;

async function upload(t: TestService, token: string, name: string): Promise<DocumentDto> {
  const form = new FormData();
  form.set('consent', 'true');
  form.set('file', new Blob([randomBytes(256)]), name);
  const res = await fetch(`${t.url}/api/documents/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  expect(res.status).toBe(201);
  return (await res.json()) as DocumentDto;
}

/** `n` uploads, 8 at a time. */
async function uploadMany(t: TestService, token: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  const queue = Array.from({ length: n }, (_, i) => i);
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
        ids.push((await upload(t, token, `cut-${i}.bin`)).id);
      }
    }),
  );
  return ids;
}

describe.each(DATABASE_KINDS)('batches closed by count on the devnets, %s', (kind) => {
  let t: TestService;
  let token: string;
  beforeAll(async () => {
    t = await startTestService(kind, {
      ANCHORING: 'devnet',
      ANCHOR_BATCH_MAX: String(MAX),
      ANCHOR_BATCH_SECONDS: '3600',
    });
    token = await t.token('cut@example.com');
  });
  afterAll(async () => {
    await t?.close();
  });

  const sql = <T>(query: string, params: unknown[] = []): Promise<T[]> =>
    t.service.deps.db.fork().getConnection().execute(query, params) as Promise<T[]>;

  /** Polls (generous bound, nothing timed asserted) until `ids` are all registered on both chains. */
  async function registered(ids: string[]): Promise<void> {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const [row] = await sql<{ n: string | number }>(
        `select count(*) as n from document where id in (${ids.map(() => '?').join(', ')})
          and onchain_status = 'registered' and stacks_status = 'registered'`,
        ids,
      );
      if (Number(row?.n) === ids.length) return;
      if (Date.now() > deadline) throw new Error(`${ids.length - Number(row?.n)} documents not registered`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  const txPerChain = async (): Promise<Record<string, number>> => {
    const rows = await sql<{ chain: string; n: string | number }>(
      'select chain, count(*) as n from anchor_tx group by chain',
    );
    return Object.fromEntries(rows.map((r) => [r.chain, Number(r.n)]));
  };

  it('2 × max uploads in quick succession: exactly 2 transactions per chain, every document registered', async () => {
    const ids = await uploadMany(t, token, 2 * MAX);
    await registered(ids);
    expect(await txPerChain()).toEqual({ evm: 2, stacks: 2 });
    // Each tree: the batch's MAX documents, then the log's checkpoint as its last leaf once the log has one (the
    // first cut may come before the log's first checkpoint).
    const batches = await sql<{ leaf_count: number; documents: string | number; checkpoint: boolean }>(
      `select b.leaf_count, (select count(*) from document_anchor a where a.batch_id = b.id) as documents,
              b.checkpoint_size is not null as checkpoint
         from anchor_batch b`,
    );
    expect(batches.map((b) => Number(b.documents))).toEqual([MAX, MAX]);
    for (const b of batches) expect(Number(b.leaf_count)).toBe(MAX + (b.checkpoint ? 1 : 0));
  }, 180_000);

  it('2 × max + 2: 2 full batches; the 2 left stay pending until their window has passed', async () => {
    const ids = await uploadMany(t, token, 2 * MAX + 2);
    // Which 2 are left is whichever committed last: wait for the 2 full batches, then look.
    const deadline = Date.now() + 120_000;
    let left: string[] = [];
    for (;;) {
      const rows = await sql<{ id: string; onchain_status: string; stacks_status: string; batched: boolean }>(
        `select d.id, d.onchain_status, d.stacks_status,
                exists (select 1 from document_anchor a where a.document_id = d.id) as batched
           from document d where d.id in (${ids.map(() => '?').join(', ')})`,
        ids,
      );
      const done = rows.filter((r) => r.onchain_status === 'registered' && r.stacks_status === 'registered');
      left = rows.filter((r) => !r.batched).map((r) => r.id);
      if (done.length === 2 * MAX) break;
      if (Date.now() > deadline) throw new Error(`${done.length} of ${2 * MAX} registered`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(left).toHaveLength(2);
    expect(await txPerChain()).toEqual({ evm: 4, stacks: 4 });
    // A collection now (what the sweep or a window job would run) leaves them: their window has not passed.
    const runner = t.service.anchoring;
    if (!runner) throw new Error('no anchoring');
    expect(await runner.triggerCollection()).toMatchObject({ batched: 0, pending: 2 });
    const still = await sql<{ n: string | number }>(
      `select count(*) as n from document d where d.id in (?, ?) and d.onchain_status = 'pending'
          and not exists (select 1 from document_anchor a where a.document_id = d.id)`,
      left,
    );
    expect(Number(still[0]?.n)).toBe(2);
    // Their window passes (created two hours ago): the next collection cuts them into one batch.
    await sql(`update document set created_at = created_at - interval '2 hours' where id in (?, ?)`, left);
    expect(await runner.triggerCollection()).toMatchObject({ batched: 2, pending: 0 });
    await registered(ids);
    expect(await txPerChain()).toEqual({ evm: 5, stacks: 5 });
  }, 240_000);
});
