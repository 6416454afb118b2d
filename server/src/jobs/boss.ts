import { AsyncLocalStorage } from 'node:async_hooks';
import type { EntityManager } from '@mikro-orm/core';
import type { PgliteConnection } from '@mikro-orm/pglite';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { type Db, fromKysely, fromPglite, PgBoss, type SendOptions } from 'pg-boss';
import type { Database } from '../db';
import type { AnchoringQueue } from '../ports/anchoring-queue';

/**
 * pg-boss on the service's own database, so a job commits with the rows that need it: PostgreSQL through its connection
 * string (its own pool), PGlite through the very instance MikroORM opened (`fromPglite` over the native client: PGlite
 * admits one process). Its tables live in the `pgboss` schema, which MikroORM's schema diff skips.
 *
 * Jobs are sent inside the caller's transaction with pg-boss's Kysely adapter over the transaction's
 * `getKysely()`: the job commits or rolls back with the rows written in that transaction.
 *
 * PGlite has a single connection, and a MikroORM transaction holds it exclusively (Kysely's PGlite dialect runs it in
 * `pglite.transaction()`): a statement on the bare instance waits until that transaction ends. `send()` does not only
 * run its INSERT on the `db` it is given: on a queue-cache miss it first reads the queue's row through pg-boss's own
 * `db`. Inside the transaction that read waited for the transaction, which waited for `send()`: a deadlock, and the
 * upload that enqueued the anchoring never answered. On PGlite pg-boss's own `db` is therefore routed: a statement it
 * issues while a send runs inside a transaction (tracked with AsyncLocalStorage) goes through that transaction; every
 * other statement goes to the instance, where PGlite serializes it with the ORM's.
 */

/** Queue of the batch window: at most one queued job (`short` policy), deferred by the window. */
export const ANCHOR_COLLECT_QUEUE = 'anchor-collect';

/**
 * What a collection handler may report back: the unbatched pending documents it left, as far as it could see
 * (undefined when the collection failed and does not know).
 */
export interface CollectReport {
  pending: number | undefined;
}

/** Tunables of `startJobQueue` (defaults suit production). */
export interface JobQueueOptions {
  /** How often an idle worker polls for jobs, in seconds (pg-boss minimum 0.5; default 2). */
  pollingIntervalSeconds?: number;
  /** Where pg-boss errors go (the composition root logs them as `pg-boss error`, module `jobs`; default: ignored). */
  onError?: (error: Error) => void;
  /** How long `stop()` waits for running handlers, in milliseconds (default 5000; pg-boss minimum 1000). */
  stopTimeoutMs?: number;
}

/**
 * The running pg-boss and what the anchoring code needs from it. It is the domain's `AnchoringQueue` once
 * `registerAnchoring` ran: before that, and after `stop`, `enqueueAnchoring` takes nothing (uploads then cost
 * nothing more, and the batcher finds their documents later by their `pending` status, so none is lost).
 */
export interface JobQueue extends AnchoringQueue {
  boss: PgBoss;
  /**
   * Asks for a batch collection `afterSeconds` from now, inside the transaction of `em` (the transaction's
   * EntityManager: the job commits or rolls back with it). A no-op when one is already queued: the first
   * document of a window opens it, the ones after it ride along.
   */
  requestCollect(em: EntityManager, afterSeconds: number): Promise<void>;
  /**
   * Sends a job of `queue` with `data` inside the transaction of `em` (the transaction's EntityManager), routed
   * as `requestCollect` is: the job commits or rolls back with the rows written in that transaction.
   */
  sendInTransaction(em: EntityManager, queue: string, data: object, options: SendOptions): Promise<void>;
  /**
   * Runs `handler` for every `anchor-collect` job (one at a time) and makes `enqueueAnchoring` request a collection
   * `batchSeconds` after the first document of a window. Besides, so that a burst is cut by count rather than split by
   * the clock, when the commit of a document recorded by this process makes `batchMax` documents pending (default:
   * never), `handler` runs at once in this process. That count is this process's own: documents committed since the
   * last collection's report, added to the `pending` it reported; it errs high (a collection that cuts nothing), never
   * low for one instance; with several instances a full batch spread over them is cut by the window instead. A handler
   * that throws fails the job, which pg-boss retries; the documents stay `pending`, so the batcher's own sweep finds
   * them anyway.
   */
  registerAnchoring(
    handler: () => Promise<CollectReport | undefined>,
    batchSeconds: number,
    batchMax?: number,
  ): Promise<void>;
  /**
   * Enqueues the anchoring of a new document inside its transaction (`tx` must be the transaction's
   * EntityManager), as `requestCollect` with the registered batch window, and counts the document once that
   * transaction commits (see `registerAnchoring`); a no-op before `registerAnchoring` and after `stop`.
   */
  enqueueAnchoring(tx: EntityManager): Promise<void>;
  /** Stops the worker and pg-boss (waiting for a running handler); `enqueueAnchoring` takes nothing from then on. */
  stop(): Promise<void>;
}

/** The transaction a `requestCollect` is sending in, for the PGlite router (see the file comment). */
const sendingIn = new AsyncLocalStorage<Db>();

/** pg-boss's own `db` on PGlite: inside a send in a transaction, that transaction; else the instance. */
function routedDb(own: Db): Db {
  return {
    executeSql: (text, values) => (sendingIn.getStore() ?? own).executeSql(text, values),
  };
}

/**
 * Starts pg-boss on `db` (creating or migrating its schema) and the anchoring queue. `databaseUrl` is the
 * PostgreSQL connection string (`DATABASE_URL`), unused on PGlite. Stop it before closing `db`.
 */
export async function startJobQueue(
  db: Database,
  databaseUrl: string | undefined,
  options: JobQueueOptions = {},
): Promise<JobQueue> {
  const polling =
    options.pollingIntervalSeconds === undefined
      ? {}
      : { pollingIntervalSeconds: options.pollingIntervalSeconds };
  let boss: PgBoss;
  if (db.kind === 'pglite') {
    const connection = db.orm.em.getConnection() as unknown as PgliteConnection;
    const pglite = await connection.getNativeClient();
    boss = new PgBoss({ db: routedDb(fromPglite(pglite)), backend: 'pglite', schedule: false, ...polling });
  } else {
    if (!databaseUrl) throw new Error('pg-boss on PostgreSQL needs the connection string');
    boss = new PgBoss({ connectionString: databaseUrl, max: 4, schedule: false, ...polling });
  }
  // A listener is needed even so: an 'error' event without one would throw.
  const onError = options.onError ?? (() => {});
  boss.on('error', onError);
  await boss.start();
  try {
    await boss.createQueue(ANCHOR_COLLECT_QUEUE, { policy: 'short' });
  } catch (e) {
    await boss.stop({ graceful: false });
    throw e;
  }

  // The batch window `enqueueAnchoring` requests; undefined while anchoring is not registered (or stopped).
  let batchSeconds: number | undefined;
  let batchMax = Number.POSITIVE_INFINITY;
  let collect: (() => Promise<CollectReport | undefined>) | undefined;
  // Unbatched pending documents as this process sees them: the last collection's report plus the documents
  // committed since it started (those committed before its read are counted twice: harmless, see above).
  let pending = 0;
  // Documents recorded by this process and committed, ever: tells which ones came during a collection.
  let committed = 0;
  // Transactions that enqueued an anchoring, until they commit or roll back.
  const awaitingCommit = new WeakSet<object>();

  const collectReporting = async (): Promise<void> => {
    for (;;) {
      if (!collect) return;
      const before = committed;
      const report = await collect();
      if (report?.pending === undefined) return;
      pending = report.pending + (committed - before);
      // Documents committed during the collection may complete a full batch that no later commit announces.
      if (pending < batchMax || batchSeconds === undefined) return;
      pending = 0;
    }
  };
  // The commit is the moment a document counts: a collection started then sees it, so a full batch is cut whole.
  db.orm.em.getEventManager().registerSubscriber({
    afterTransactionCommit: ({ transaction }) => {
      if (!transaction || !awaitingCommit.delete(transaction)) return;
      committed += 1;
      pending += 1;
      if (pending < batchMax || batchSeconds === undefined) return;
      pending = 0;
      collectReporting().catch((e: unknown) => onError(e instanceof Error ? e : new Error(String(e))));
    },
    afterTransactionRollback: ({ transaction }) => {
      if (transaction) awaitingCommit.delete(transaction);
    },
  });

  const queue: JobQueue = {
    boss,
    requestCollect: (em, afterSeconds) =>
      queue.sendInTransaction(
        em,
        ANCHOR_COLLECT_QUEUE,
        {},
        { startAfter: Math.max(0, Math.round(afterSeconds)) },
      ),
    sendInTransaction: async (em, name, data, sendOptions) => {
      const tx = fromKysely((em as SqlEntityManager).getKysely());
      await sendingIn.run(tx, () => boss.send(name, data, { ...sendOptions, db: tx }));
    },
    registerAnchoring: async (handler, seconds, max) => {
      collect = handler;
      await boss.work(ANCHOR_COLLECT_QUEUE, { batchSize: 1, ...polling }, collectReporting);
      batchMax = max ?? Number.POSITIVE_INFINITY;
      batchSeconds = seconds;
    },
    enqueueAnchoring: async (tx) => {
      if (batchSeconds === undefined) return;
      await queue.requestCollect(tx, batchSeconds);
      const transaction = tx.getTransactionContext();
      if (transaction) awaitingCommit.add(transaction);
    },
    stop: async () => {
      batchSeconds = undefined;
      pending = 0;
      await boss.stop({ graceful: true, timeout: options.stopTimeoutMs ?? 5000 });
    },
  };
  return queue;
}
