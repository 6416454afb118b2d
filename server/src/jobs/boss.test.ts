import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestPglite } from '../../../test/harness/db-templates';
import { createTestDatabase } from '../../../test/harness/postgres';
import { type Database, openDatabase } from '../db';
import { Document, Tenant } from '../db/entities';
import { recordUploadedDocument } from '../domain/documents/service';
import type { Actor } from '../domain/tenancy/actor';
import { ANCHOR_COLLECT_QUEUE, type JobQueue, startJobQueue } from './boss';

/**
 * pg-boss on both database kinds, the job sent in the Document's transaction (committed together, rolled back
 * together). Each database is fresh; the tests of a kind run in order and share its queue.
 */

type Kind = 'pglite' | 'postgresql';

/** A database of `kind` with one tenant; `dispose` closes (and on PostgreSQL drops) it. */
async function openKind(
  kind: Kind,
): Promise<{ db: Database; url: string | undefined; dispose(): Promise<void> }> {
  if (kind === 'pglite') {
    const db = await openTestPglite();
    return { db, url: undefined, dispose: () => db.close() };
  }
  const pg = await createTestDatabase();
  const db = await openDatabase({ databaseUrl: pg.url, dataDir: '' });
  return {
    db,
    url: pg.url,
    dispose: async () => {
      await db.close();
      await pg.drop();
    },
  };
}

/** A database of `kind` with one personal tenant (serial prefix `prefix`) and its owner as the actor. */
async function openWithOwner(
  kind: Kind,
  prefix: string,
): Promise<{ db: Database; url: string | undefined; dispose(): Promise<void>; actor: Actor }> {
  const opened = await openKind(kind);
  const em = opened.db.fork();
  const tenant = em.create(Tenant, {
    id: crypto.randomUUID(),
    kind: 'personal',
    externalId: `${prefix}-${kind}`,
    name: 'T',
    serialPrefix: prefix,
  });
  await em.flush();
  return { ...opened, actor: { userId: 'u1', email: null, tenant, role: 'owner', ip: null } };
}

/** Resolves with `value` or rejects after `ms`: a hang fails the test in seconds, with a message. */
function within<T>(ms: number, what: string, value: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
  });
  return Promise.race([value, timeout]).finally(() => clearTimeout(timer));
}

describe.each<Kind>(['pglite', 'postgresql'])('job queue on %s', (kind) => {
  let db: Database;
  let url: string | undefined;
  let dispose: () => Promise<void>;
  let queue: JobQueue | undefined;
  let actor: Actor;
  let serial = 0;

  beforeAll(async () => {
    ({ db, url, dispose, actor } = await openWithOwner(kind, 'JQ'));
  }, 60_000);

  afterAll(async () => {
    await queue?.stop();
    await dispose?.();
  });

  /** Jobs of the collect queue in any state, straight from pg-boss's table. */
  const jobCount = async (): Promise<number> => {
    const rows = await db
      .fork()
      .getConnection()
      .execute<{ n: number }[]>('SELECT count(*)::int AS n FROM pgboss.job WHERE name = ?', [
        ANCHOR_COLLECT_QUEUE,
      ]);
    return rows[0]?.n ?? 0;
  };

  const newDocument = (tx: ReturnType<Database['fork']>, sha256Hash: string) =>
    tx.create(Document, {
      id: crypto.randomUUID(),
      tenant: actor.tenant.id,
      serialNumber: `JQ-${kind}-${++serial}`,
      fileName: 'f.txt',
      fileSize: 1,
      mimeType: 'text/plain',
      sha256Hash,
      sourceType: 'upload',
      consentGiven: true,
      consentTimestamp: new Date(),
      uploaderUserId: 'u1',
    });

  it('starts and stops cleanly and quickly', async () => {
    const started = Date.now();
    const q = await within(20_000, 'start', startJobQueue(db, url));
    await within(10_000, 'stop', q.stop());
    expect(Date.now() - started).toBeLessThan(15_000);
    queue = await within(20_000, 'restart', startJobQueue(db, url, { pollingIntervalSeconds: 0.5 }));
    await within(
      10_000,
      'registerAnchoring',
      queue.registerAnchoring(async () => undefined, 0),
    );
    await within(10_000, 'stop', queue.stop());
    // After stop, enqueueing is a no-op again (no stopped queue is written to).
    await db.fork().transactional((tx) => (queue as JobQueue).enqueueAnchoring(tx));
    expect(await jobCount()).toBe(0);
    queue = await within(20_000, 'restart', startJobQueue(db, url, { pollingIntervalSeconds: 0.5 }));
  });

  it('a job sent in a transaction that rolls back does not exist, nor does the Document', async () => {
    const q = queue as JobQueue;
    const hash = 'b'.repeat(64);
    const attempt = db.fork().transactional(async (tx) => {
      newDocument(tx, hash);
      await tx.flush();
      await q.requestCollect(tx, 0);
      throw new Error('abort the upload');
    });
    await expect(within(10_000, 'rolled-back send', attempt)).rejects.toThrow('abort the upload');
    expect(await db.fork().count(Document, { sha256Hash: hash })).toBe(0);
    expect(await jobCount()).toBe(0);
  });

  it('a worker started after the send picks the job up', async () => {
    const q = queue as JobQueue;
    const hash = 'c'.repeat(64);
    await within(
      10_000,
      'committed send',
      db.fork().transactional(async (tx) => {
        newDocument(tx, hash);
        await tx.flush();
        await q.requestCollect(tx, 0);
      }),
    );
    expect(await db.fork().count(Document, { sha256Hash: hash })).toBe(1);
    expect(await jobCount()).toBe(1);
    const [stats] = await q.boss.getQueueStats(ANCHOR_COLLECT_QUEUE);
    expect(stats?.queuedCount).toBe(1);

    let runs = 0;
    let ran: () => void = () => undefined;
    const first = new Promise<void>((resolve) => {
      ran = resolve;
    });
    await q.registerAnchoring(async () => {
      runs++;
      ran();
    }, 0);
    await within(15_000, 'worker picking up the earlier job', first);
    expect(runs).toBe(1);
  });

  it('an upload (recordUploadedDocument) commits its Document and its job together; a worker runs it', async () => {
    const q = queue as JobQueue;
    // registerAnchoring ran in the previous test: enqueueAnchoring now sends, batch window 0 s.
    await q.stop();
    let ran: () => void = () => undefined;
    const handled = new Promise<void>((resolve) => {
      ran = resolve;
    });
    queue = await startJobQueue(db, url, { pollingIntervalSeconds: 0.5 });
    const before = await jobCount();
    await queue.registerAnchoring(async () => {
      ran();
    }, 0);
    const doc = await within(
      10_000,
      'upload',
      recordUploadedDocument(
        db.fork(),
        actor,
        {
          storageKey: 'k',
          fileName: 'a.txt',
          fileSize: 1,
          mimeType: 'text/plain',
          sha256Hash: 'd'.repeat(64),
          consentTimestamp: new Date(),
        },
        { anchoring: queue },
      ),
    );
    expect(await db.fork().count(Document, { id: doc.id })).toBe(1);
    await within(15_000, 'worker running the upload job', handled);
    expect(await jobCount()).toBe(before + 1);
  });
});

describe.each<Kind>(['pglite', 'postgresql'])('full batch signal on %s', (kind) => {
  let db: Database;
  let url: string | undefined;
  let dispose: () => Promise<void>;
  let queue: JobQueue | undefined;
  let actor: Actor;

  beforeAll(async () => {
    ({ db, url, dispose, actor } = await openWithOwner(kind, 'FB'));
  }, 60_000);

  afterAll(async () => {
    await queue?.stop();
    await dispose?.();
  });

  let n = 0;
  const upload = (q: JobQueue) =>
    recordUploadedDocument(
      db.fork(),
      actor,
      {
        storageKey: `k${++n}`,
        fileName: 'a.txt',
        fileSize: 1,
        mimeType: 'text/plain',
        sha256Hash: n.toString(16).padStart(64, '0'),
        consentTimestamp: new Date(),
      },
      { anchoring: q },
    );

  it('the commit that makes batchMax documents pending runs a collection at once; a rollback does not count', async () => {
    const q = await startJobQueue(db, url, { pollingIntervalSeconds: 0.5 });
    queue = q;
    // Each collection reports what it "left": the test's answers stand in for the batcher's.
    const reports = [2, 0];
    const runs: (() => void)[] = [];
    let calls = 0;
    const nextRun = () => new Promise<void>((resolve) => runs.push(resolve));
    // A window of an hour: only the count can start a collection during the test.
    await q.registerAnchoring(
      async () => {
        calls++;
        runs.shift()?.();
        return { pending: reports.shift() ?? 0 };
      },
      3600,
      3,
    );
    await upload(q);
    await upload(q);
    const rolledBack = db.fork().transactional(async (tx) => {
      await q.enqueueAnchoring(tx);
      throw new Error('abort');
    });
    await expect(rolledBack).rejects.toThrow('abort');
    expect(calls).toBe(0);
    const first = nextRun();
    await upload(q);
    await within(10_000, 'collection at the third commit', first);
    expect(calls).toBe(1);
    // That collection reported 2 documents left: the next commit makes 3 again.
    const second = nextRun();
    await upload(q);
    await within(10_000, 'collection at the count resumed from the report', second);
    expect(calls).toBe(2);
    // It reported none left: two more uploads do not reach 3.
    await upload(q);
    await upload(q);
    expect(calls).toBe(2);
  });

  it('commits made during a collection that complete a full batch start the next one without another commit', async () => {
    await queue?.stop();
    const q = await startJobQueue(db, url, { pollingIntervalSeconds: 0.5 });
    queue = q;
    let calls = 0;
    let secondRan = (): void => {};
    const second = new Promise<void>((resolve) => {
      secondRan = resolve;
    });
    await q.registerAnchoring(
      async () => {
        calls++;
        if (calls > 1) {
          secondRan();
          return { pending: 0 };
        }
        // Two documents commit while the first collection runs, and it saw one of them: 1 + 2 make 3.
        await upload(q);
        await upload(q);
        return { pending: 1 };
      },
      3600,
      3,
    );
    for (let i = 0; i < 3; i++) await upload(q);
    await within(10_000, 'the collection owed to commits made during the previous one', second);
    expect(calls).toBe(2);
  });
});
