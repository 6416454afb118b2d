import { messages, PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgliteWorker, type PgliteWorker } from './pglite-worker';

describe('PGlite in a worker thread', () => {
  let db: PgliteWorker;

  beforeAll(async () => {
    db = await openPgliteWorker({ dataDir: 'memory://', startParams: PGlite.defaultStartParams });
    await db.exec(`
      CREATE TABLE item (id int PRIMARY KEY, name text UNIQUE, data bytea, big int8, doc jsonb, at timestamptz,
        days date[]);
    `);
  }, 120_000);

  afterAll(async () => {
    await db?.close();
  });

  it('keeps values across the thread boundary as MikroORM reads them in-process', async () => {
    await db.query('INSERT INTO item VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      1,
      'one',
      new Uint8Array([0, 255, 7]),
      2n ** 53n + 1n,
      JSON.stringify({ a: [1, 'x'] }),
      '2026-11-26T10:00:00.000Z',
      ['2026-11-26', '2026-11-27'],
    ]);
    const { rows } = await db.query<Record<string, unknown>>('SELECT * FROM item WHERE id = $1', [1], {
      rowMode: 'object',
    });
    expect(rows[0]).toEqual({
      id: 1,
      name: 'one',
      data: new Uint8Array([0, 255, 7]),
      big: 2n ** 53n + 1n,
      doc: { a: [1, 'x'] },
      // Timestamps and dates stay strings, as MikroORM's PGlite driver parses them.
      at: '2026-11-26 10:00:00+00',
      days: ['2026-11-26', '2026-11-27'],
    });
    const many = await db.exec('SELECT 1 AS a; SELECT 2 AS b');
    expect(many.map((r) => r.rows)).toEqual([[{ a: 1 }], [{ b: 2 }]]);
  });

  it("passes PostgreSQL's errors with their fields (MikroORM maps them by code and constraint)", async () => {
    const error = await db
      .query('INSERT INTO item (id, name) VALUES (2, $1)', ['one'])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(messages.DatabaseError);
    expect(error).toMatchObject({ code: '23505', constraint: 'item_name_key', table: 'item' });
    // The session is not left in a failed state.
    expect((await db.query('SELECT count(*)::int AS n FROM item')).rows).toEqual([{ n: 1 }]);
  });

  it('commits a transaction whose callback returns, rolls back one that throws or asks to', async () => {
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO item (id, name) VALUES (10, $1)', ['kept']);
    });
    const thrown = new Error('changed my mind');
    await expect(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO item (id, name) VALUES (11, $1)', ['thrown']);
        throw thrown;
      }),
    ).rejects.toBe(thrown);
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO item (id, name) VALUES (12, $1)', ['rolled back']);
      await tx.rollback();
      expect(tx.closed).toBe(true);
      await expect(tx.query('SELECT 1')).rejects.toThrow(/closed/);
    });
    const { rows } = await db.query<{ id: number }>('SELECT id FROM item WHERE id >= 10 ORDER BY id');
    expect(rows.map((r) => r.id)).toEqual([10]);
  });

  it('a statement outside an open transaction waits for it to end (one session, as PGlite in-process)', async () => {
    const order: string[] = [];
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const transaction = db.transaction(async (tx) => {
      await tx.query('INSERT INTO item (id, name) VALUES (20, $1)', ['in tx']);
      order.push('inserted');
      await held;
      order.push('committing');
    });
    // Sent while the transaction is open: it must not see or interleave with its uncommitted row.
    while (!order.includes('inserted')) await new Promise((r) => setImmediate(r));
    const outside = db.query<{ n: number }>('SELECT count(*)::int AS n FROM item WHERE id = 20').then((r) => {
      order.push('outside answered');
      return r.rows[0]?.n;
    });
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['inserted']);
    release();
    await transaction;
    expect(await outside).toBe(1);
    expect(order).toEqual(['inserted', 'committing', 'outside answered']);
  });

  it("keeps this thread's event loop free while PostgreSQL works", async () => {
    let turns = 0;
    let spinning = true;
    const spin = () => {
      turns += 1;
      if (spinning) setImmediate(spin);
    };
    setImmediate(spin);
    const { rows } = await db.query<{ s: string }>(
      'SELECT sum(i)::text AS s FROM generate_series(1, 3000000) i',
    );
    spinning = false;
    expect(rows[0]?.s).toBe('4500001500000');
    // In this thread PGlite would run the whole statement in one synchronous call: a handful of turns at most.
    expect(turns).toBeGreaterThan(100);
  });

  it('refuses statements once closed', async () => {
    const other = await openPgliteWorker({ dataDir: 'memory://', startParams: PGlite.defaultStartParams });
    await other.close();
    expect(other.closed).toBe(true);
    await expect(other.query('SELECT 1')).rejects.toThrow(/closed/);
  }, 60_000);
});
