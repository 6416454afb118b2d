import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { ed25519KeyId, formatCheckpoint, formatSignedNote } from '@notary/trust/signed-note';
import { checkpointLeaf } from '@notary/verify/anchored-checkpoint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestPglite } from '../../../../test/harness/db-templates';
import { createTestDatabase } from '../../../../test/harness/postgres';
import { type Database, openDatabase } from '../../db';
import { AnchorBatch, Document, DocumentAnchor, Tenant } from '../../db/entities';
import { latestCheckpoint } from '../log/transparency-log';
import { type CutRule, collectBatch, HELD_ROWS_RETRY_MS, partialBatchDue } from './batch-cut';
import { hashFromHex, type MerkleProof, verifyMerkleProof } from './merkle';
import { addPendingDocument } from './pending-documents.testing';

/**
 * The cut rule of `collectBatch` (a burst is cut by count, not split by the clock) on both database kinds, with an
 * injected clock: a full batch is cut at once, a partial one only once the uploads paused for the window or its oldest
 * waited the longest wait; concurrent collections (PostgreSQL) never put a document in two batches.
 */

const MAX = 5;
const WINDOW_MS = 3_600_000;
const MAX_WAIT_MS = 5 * WINDOW_MS;

describe('partialBatchDue', () => {
  const rule: CutRule = { windowMs: 10_000, maxWaitMs: 50_000 };
  const t = (s: number) => new Date(1_000_000 + s * 1000);
  it('is due once the newest document has waited the window', () => {
    expect(partialBatchDue(t(0), t(0), t(9.999), rule)).toEqual(t(10));
    expect(partialBatchDue(t(0), t(0), t(10), rule)).toBe(true);
    expect(partialBatchDue(t(0), t(8), t(17), rule)).toEqual(t(18));
    expect(partialBatchDue(t(0), t(8), t(18), rule)).toBe(true);
  });
  it('is due once the oldest has waited the longest wait, however recent the newest', () => {
    expect(partialBatchDue(t(0), t(45), t(49), rule)).toEqual(t(50));
    expect(partialBatchDue(t(0), t(49), t(50), rule)).toBe(true);
  });
});

type Kind = 'pglite' | 'postgresql';

describe.each<Kind>(['pglite', 'postgresql'])('collectBatch with the cut rule on %s', (kind) => {
  let db: Database;
  let dispose: () => Promise<void>;
  let tenantId: string;
  let serial = 0;
  // The injected clock: the real time moved by `advance`.
  let offsetMs = 0;
  const rule: CutRule = {
    windowMs: WINDOW_MS,
    maxWaitMs: MAX_WAIT_MS,
    now: () => new Date(Date.now() + offsetMs),
  };
  const collect = (maxBatchSize = MAX) =>
    collectBatch(db.fork(), { chains: ['evm', 'stacks'], maxBatchSize, cut: rule });

  beforeAll(async () => {
    if (kind === 'pglite') {
      db = await openTestPglite();
      dispose = () => db.close();
    } else {
      const pg = await createTestDatabase();
      db = await openDatabase({ databaseUrl: pg.url, dataDir: '' });
      dispose = async () => {
        await db.close();
        await pg.drop();
      };
    }
    const em = db.fork();
    tenantId = randomUUID();
    em.create(Tenant, {
      id: tenantId,
      kind: 'personal',
      externalId: `u-${kind}`,
      name: 'T',
      serialPrefix: 'BC',
    });
    await em.flush();
  }, 60_000);

  afterAll(async () => {
    await dispose?.();
  });

  /** `n` pending documents created now (by the injected clock), one per transaction as uploads are. */
  async function add(n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const em = db.fork();
      const id = addPendingDocument(em, tenantId, `BC-${kind}-${++serial}`, rule.now?.() ?? new Date());
      await em.flush();
      ids.push(id);
    }
    return ids;
  }

  /** Documents in no batch yet. */
  const unbatched = async (): Promise<number> => {
    const em = db.fork();
    return (await em.count(Document, {})) - (await em.count(DocumentAnchor, {}));
  };

  /** Collects until nothing more is cut; the sizes of the batches cut and what the last call left waiting. */
  async function collectUntilIdle() {
    const sizes: number[] = [];
    for (;;) {
      const r = await collect();
      if (r.batchId) sizes.push(r.leafCount);
      if (!r.more) return { sizes, waiting: r.waiting };
    }
  }

  it('2 × max documents: 2 full batches at once, with the window far away', async () => {
    await add(2 * MAX);
    const { sizes, waiting } = await collectUntilIdle();
    expect(sizes).toEqual([MAX, MAX]);
    expect(waiting).toBeUndefined();
    expect(await unbatched()).toBe(0);
  });

  it('2 × max + 2: 2 full batches; the 2 left wait for the window, then are cut', async () => {
    await add(2 * MAX + 2);
    const first = await collectUntilIdle();
    expect(first.sizes).toEqual([MAX, MAX]);
    expect(first.waiting?.documents).toBe(2);
    expect(await unbatched()).toBe(2);
    // Another sweep before the window: the partial batch stays.
    expect(await collect()).toMatchObject({ batchId: undefined, waiting: { documents: 2 } });
    expect(await unbatched()).toBe(2);
    offsetMs += WINDOW_MS;
    const second = await collectUntilIdle();
    expect(second.sizes).toEqual([2]);
    expect(await unbatched()).toBe(0);
  });

  it('a partial batch whose oldest is younger than the window is not cut; due = newest + window', async () => {
    const start = rule.now?.().getTime() ?? 0;
    await add(1);
    const r = await collect();
    expect(r).toMatchObject({ batchId: undefined, leafCount: 0, more: false, waiting: { documents: 1 } });
    expect(r.waiting?.dueAt.getTime()).toBeGreaterThanOrEqual(start + WINDOW_MS);
    offsetMs += WINDOW_MS;
    expect((await collect()).leafCount).toBe(1);
  });

  it('uploads that keep coming are not cut by the window, but by the longest wait of their oldest', async () => {
    // One document every half window, batches of up to 100: the uploads never pause for a whole window.
    const cuts: number[] = [];
    for (let i = 0; i < 12; i++) {
      await add(1);
      const r = await collect(100);
      cuts.push(r.leafCount);
      offsetMs += WINDOW_MS / 2;
    }
    // Collected after each: nothing until the oldest has waited 5 windows (the 11th document's time), then
    // those 11 in one batch (not 5 batches of 2 as one window each would give), then the 12th waits.
    expect(cuts).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 11, 0]);
    offsetMs += WINDOW_MS;
    expect((await collect(100)).leafCount).toBe(1);
    expect(await unbatched()).toBe(0);
  });

  it('a full batch is cut at once even while a partial rest waits', async () => {
    await add(MAX - 1);
    expect((await collect()).waiting?.documents).toBe(MAX - 1);
    await add(1);
    expect((await collect()).leafCount).toBe(MAX);
  });

  it.runIf(kind === 'postgresql')(
    'a full batch of which another transaction holds a row is due again in a moment, not at the window',
    async () => {
      const ids = await add(MAX);
      let release = (): void => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let held = (): void => {};
      const holding = new Promise<void>((resolve) => {
        held = resolve;
      });
      // A row inserted beside a document (its foreign key) locks the document row like this.
      const holder = db.fork().transactional(async (tx) => {
        await (tx as SqlEntityManager).execute('select id from document where id = ? for update', [ids[0]]);
        held();
        await released;
      });
      await holding;
      const start = rule.now?.().getTime() ?? 0;
      const r = await collect();
      release();
      await holder;
      expect(r).toMatchObject({ batchId: undefined, waiting: { documents: MAX - 1 } });
      expect(r.waiting?.dueAt.getTime()).toBeLessThanOrEqual(start + HELD_ROWS_RETRY_MS + 1000);
      expect((await collect()).leafCount).toBe(MAX);
    },
  );

  it.runIf(kind === 'postgresql')(
    'concurrent collections (several instances) put every document in exactly one batch',
    async () => {
      const ids = await add(4 * MAX + 1);
      const results = await Promise.all(Array.from({ length: 6 }, () => collectUntilIdle()));
      // Collections that each saw part of the rows (the rest locked by another) may both have left them:
      // the next one, alone, cuts what is full.
      results.push(await collectUntilIdle());
      const em = db.fork();
      const anchors = await em.find(DocumentAnchor, { document: { $in: ids } });
      expect(new Set(anchors.map((a) => a.document.id)).size).toBe(anchors.length);
      // Every full batch is cut, only full ones (the odd document stays for its window).
      expect(anchors.length).toBe(4 * MAX);
      expect(results.flatMap((r) => r.sizes).every((n) => n === MAX)).toBe(true);
      const batches = await em.find(AnchorBatch, {
        id: { $in: [...new Set(anchors.map((a) => a.batch.id))] },
      });
      expect(batches.map((b) => b.leafCount)).toEqual([MAX, MAX, MAX, MAX]);
    },
  );

  /** A signed checkpoint of `size` leaves recorded as the log's latest (the sequencer's row, by hand). */
  async function recordCheckpoint(size: number): Promise<string> {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const raw = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }).subarray(-32));
    const root = new Uint8Array(32).fill(size);
    const text = formatCheckpoint({ origin: 'notary.test/log', size, root, extensions: [] });
    const note = formatSignedNote({
      text,
      signatures: [
        {
          name: 'notary.test/log',
          id: ed25519KeyId('notary.test/log', raw),
          signature: new Uint8Array(sign(null, Buffer.from(text), privateKey)),
        },
      ],
    });
    await (db.fork() as SqlEntityManager).execute(
      'insert into log_checkpoint (size, root, note, created_at) values (?, ?, ?, ?)',
      [size, Buffer.from(root), note, new Date()],
    );
    return note;
  }

  it("anchors the log's latest checkpoint as the batch's last leaf, whose proof leads to the root", async () => {
    const note = await recordCheckpoint(7);
    await add(MAX);
    const r = await collectBatch(db.fork(), {
      chains: ['evm', 'stacks'],
      maxBatchSize: MAX,
      cut: rule,
      checkpoint: latestCheckpoint,
    });
    expect(r.leafCount).toBe(MAX);
    const batch = await db.fork().findOneOrFail(AnchorBatch, { id: r.batchId ?? '' });
    expect(batch).toMatchObject({ leafCount: MAX + 1, checkpointSize: 7, checkpointNote: note });
    const proof = batch.checkpointProof as MerkleProof;
    expect(proof.index).toBe(MAX);
    expect(proof.siblings.every((x) => x.position === 'left')).toBe(true);
    const leaf = hashFromHex(await checkpointLeaf(note));
    expect(verifyMerkleProof(leaf, proof, hashFromHex(batch.root))).toBe(true);
  });

  it.runIf(kind === 'postgresql')(
    "does not wait for the log's sequencer: a cut while it holds its lock and its row",
    async () => {
      await add(MAX);
      let release = (): void => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let held = (): void => {};
      const holding = new Promise<void>((resolve) => {
        held = resolve;
      });
      const sequencer = db.fork().transactional(async (tx) => {
        const sql = tx as SqlEntityManager;
        await sql.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [
          'notary:transparency-log',
        ]);
        await sql.execute(
          'insert into log_sequencer (id, safe_id) values (1, 0) on conflict (id) do nothing',
        );
        await sql.execute('select safe_id from log_sequencer where id = 1 for update');
        held();
        await released;
      });
      await holding;
      try {
        const r = await collectBatch(db.fork(), {
          chains: ['evm'],
          maxBatchSize: MAX,
          cut: rule,
          checkpoint: latestCheckpoint,
        });
        expect(r.leafCount).toBe(MAX);
      } finally {
        release();
        await sequencer;
      }
    },
  );
});
