/**
 * The thread that owns the embedded database (`pglite-worker.ts`): opens PGlite where `workerData` says, then
 * answers each request with PGlite's own result. Requests are not serialized here: PGlite's own locks order
 * them, as they would in one thread. Node runs it without tsx (`workerExecArgv`): type syntax only,
 * and nothing of this repository imported but types.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { messages, PGlite, type Transaction, types } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { PgliteReply, PgliteRequest, PgliteWireError, PgliteWorkerOptions } from './pglite-worker';

/** A rollback asked for by the caller's thread: thrown out of PGlite's transaction callback, not an error. */
const ROLLBACK = Symbol('rollback');

interface OpenTransaction {
  tx: Transaction;
  /** Lets PGlite's callback return (commit) or throw `ROLLBACK`. */
  finish: (commit: boolean) => void;
  /** The `end` request to answer once PGlite has committed or rolled back. */
  endId: number | undefined;
}

/**
 * The type parsers MikroORM's PGlite driver sets when it opens PGlite itself (`createPostgreSqlTypeParsers` of
 * `@mikro-orm/sql`, not imported here: it would load MikroORM into this thread): date, timestamp, timestamptz
 * and interval stay strings, as MikroORM maps them, and so do the elements of their arrays.
 */
const MIKRO_ORM_TYPE_PARSERS: Record<number, (value: string) => unknown> = {
  ...Object.fromEntries([1082, 1114, 1184, 1186].map((oid) => [oid, (value: string) => value])),
  ...Object.fromEntries(
    [1182, 1115, 1185, 1187].map((oid) => [oid, (value: string) => types.arrayParser(value, (v) => v, oid)]),
  ),
};

const port = parentPort;
if (!port) throw new Error('pglite-worker.thread.ts runs as a worker thread');
const options = workerData as PgliteWorkerOptions;

function toWire(e: unknown): PgliteWireError {
  if (!(e instanceof Error))
    return { name: 'Error', message: String(e), stack: undefined, database: false, fields: {} };
  const fields: PgliteWireError['fields'] = {};
  for (const [key, value] of Object.entries(e)) {
    if (
      value === null ||
      typeof value === 'string' ||
      typeof value === 'number' ||
      typeof value === 'boolean'
    ) {
      fields[key] = value;
    }
  }
  return {
    name: e.name,
    message: e.message,
    stack: e.stack,
    database: e instanceof messages.DatabaseError,
    fields,
  };
}

function reply(message: PgliteReply): void {
  try {
    port?.postMessage(message);
  } catch (e) {
    // A value the structured clone cannot copy: the caller gets an error instead of waiting forever.
    if ('id' in message)
      port?.postMessage({ id: message.id, ok: false, error: toWire(e) } satisfies PgliteReply);
  }
}

async function main(): Promise<void> {
  let db: PGlite;
  try {
    db = await PGlite.create({
      dataDir: options.dataDir,
      startParams: options.startParams,
      parsers: MIKRO_ORM_TYPE_PARSERS,
      // Trigram indexes (the documents list's file name search) exist on PostgreSQL and here alike; loading the
      // extension's files costs about 10 ms, and only `create extension` (a migration) enables it.
      extensions: { pg_trgm },
    });
  } catch (e) {
    reply({ started: false, error: toWire(e) });
    return;
  }
  const open = new Map<number, OpenTransaction>();
  const inTransaction = (tx: number | undefined): PGlite | Transaction => {
    if (tx === undefined) return db;
    const entry = open.get(tx);
    if (!entry) throw new Error('The transaction is already closed');
    return entry.tx;
  };

  const begin = (id: number) => {
    let begun = false;
    db.transaction(async (tx) => {
      const decided = new Promise<boolean>((resolve) => {
        open.set(id, { tx, finish: resolve, endId: undefined });
      });
      begun = true;
      reply({ id, ok: true, value: undefined });
      if (!(await decided)) throw ROLLBACK;
    }).then(
      () => settle(undefined),
      (e: unknown) => settle(e),
    );
    const settle = (error: unknown) => {
      const endId = open.get(id)?.endId;
      open.delete(id);
      if (!begun) {
        reply({ id, ok: false, error: toWire(error) });
        return;
      }
      if (endId === undefined) return;
      if (error === undefined || error === ROLLBACK) reply({ id: endId, ok: true, value: undefined });
      else reply({ id: endId, ok: false, error: toWire(error) });
    };
  };

  const handle = async (request: PgliteRequest): Promise<unknown> => {
    switch (request.op) {
      case 'query':
        return inTransaction(request.tx).query(request.sql, request.params, request.options);
      case 'exec':
        return inTransaction(request.tx).exec(request.sql, request.options);
      case 'rollback':
        return (inTransaction(request.tx) as Transaction).rollback();
      case 'close':
        await db.close();
        return undefined;
      default:
        throw new Error(`Unknown request ${(request as { op: string }).op}`);
    }
  };

  port?.on('message', (request: PgliteRequest) => {
    if (request.op === 'begin') {
      begin(request.id);
      return;
    }
    if (request.op === 'end') {
      const entry = open.get(request.tx);
      if (!entry) {
        reply({ id: request.id, ok: false, error: toWire(new Error('The transaction is already closed')) });
        return;
      }
      entry.endId = request.id;
      entry.finish(request.commit);
      return;
    }
    handle(request).then(
      (value) => reply({ id: request.id, ok: true, value }),
      (e: unknown) => reply({ id: request.id, ok: false, error: toWire(e) }),
    );
  });
  reply({ started: true });
}

void main();
