import { Worker } from 'node:worker_threads';
import { messages, type Results } from '@electric-sql/pglite';
import { moduleEntry } from '@notary/shared/module-entry';
import { SMALL_WORKER_HEAP, workerExecArgv } from '../worker-exec-argv';
import { awaitWorkerStart } from '../worker-start';

/**
 * The embedded database (PGlite) in a worker thread. PGlite is PostgreSQL compiled to WebAssembly and runs
 * synchronously on the thread that calls it: on the service's main thread, initdb and the server start of a
 * fresh data directory blocked the event loop for about 4 s, and every statement for its own duration, so
 * HTTP requests (`/health` included) and kept-alive connections waited behind them. Here the thread that
 * owns PGlite answers messages, and the caller's thread only sends statements and receives rows.
 *
 * The object this module returns has the part of PGlite's interface that MikroORM's PGlite driver (through
 * Kysely's PGlite dialect) and pg-boss's `fromPglite` use: `query`, `exec`, `transaction` (with `query`, `exec`,
 * `rollback`, `closed`), `close`, `closed`, `ready`, `waitReady`. Semantics are PGlite's own, since the thread
 * calls the same methods: one session; a statement outside a transaction waits until an open transaction
 * ends; a transaction commits when its callback returns and rolls back when it throws.
 */

/** Query options that cross the thread boundary (functions and blobs cannot be sent to another thread). */
export interface PgliteWorkerQueryOptions {
  rowMode?: 'array' | 'object';
  paramTypes?: number[];
}

/** A transaction opened by `PgliteWorker.transaction`. */
export interface PgliteWorkerTransaction {
  query<T>(sql: string, params?: unknown[], options?: PgliteWorkerQueryOptions): Promise<Results<T>>;
  exec(sql: string, options?: PgliteWorkerQueryOptions): Promise<Results[]>;
  /** Rolls the transaction back now; the callback's return then commits nothing. */
  rollback(): Promise<void>;
  readonly closed: boolean;
}

/** Where the worker opens PGlite: `dataDir` (a directory, or `memory://`) and the server's start parameters. */
export interface PgliteWorkerOptions {
  dataDir: string;
  /** `postgres` command-line parameters (`PGlite.defaultStartParams` plus `-c name=value` settings). */
  startParams: string[];
}

/** A request from the caller's thread. `tx` names an open transaction (the id of its `begin`). */
export type PgliteRequest =
  | {
      id: number;
      op: 'query';
      sql: string;
      params: unknown[] | undefined;
      options: PgliteWorkerQueryOptions | undefined;
      tx: number | undefined;
    }
  | {
      id: number;
      op: 'exec';
      sql: string;
      options: PgliteWorkerQueryOptions | undefined;
      tx: number | undefined;
    }
  | { id: number; op: 'begin' }
  | { id: number; op: 'rollback'; tx: number }
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'close' };

/** An error as it crosses the thread boundary: PGlite's `DatabaseError` fields (code, detail, constraint...) kept. */
export interface PgliteWireError {
  name: string;
  message: string;
  stack: string | undefined;
  database: boolean;
  fields: Record<string, string | number | boolean | null>;
}

/** A reply of the worker: to a request (`id`), or its start (`started`). */
export type PgliteReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: PgliteWireError }
  | { started: true }
  | { started: false; error: PgliteWireError };

type PendingCall = { resolve: (value: unknown) => void; reject: (error: Error) => void };

/** Distributes requests without their `id`, which `PgliteWorker.call` assigns. */
type Unnumbered<T> = T extends unknown ? Omit<T, 'id'> : never;

const WORKER_ENTRY = moduleEntry(import.meta.url, 'pglite-worker.thread');

/**
 * Starts the worker and opens PGlite in it (initdb on a new directory, then the server); resolves once it
 * accepts statements.
 * @throws Error with PGlite's message when it cannot open the directory.
 */
export async function openPgliteWorker(options: PgliteWorkerOptions): Promise<PgliteWorker> {
  const worker = new Worker(WORKER_ENTRY, {
    workerData: options,
    // The thread's code imports PGlite and types only (see pglite-worker.thread.ts).
    execArgv: workerExecArgv(WORKER_ENTRY, { erasableOnly: true }),
    resourceLimits: SMALL_WORKER_HEAP,
  });
  await awaitWorkerStart(worker, "The embedded database's worker", (reply: PgliteReply) => {
    if (!('started' in reply)) return undefined;
    return reply.started ? { value: undefined } : fromWire(reply.error);
  });
  return new PgliteWorker(worker);
}

/** PGlite running in a worker thread (see the module comment); built by `openPgliteWorker`. */
export class PgliteWorker {
  readonly ready = true;
  readonly waitReady: Promise<void> = Promise.resolve();
  #worker: Worker;
  #pending = new Map<number, PendingCall>();
  #nextId = 1;
  #closed = false;
  /** Why the worker stopped unasked, for every later call. */
  #failure: Error | undefined;

  constructor(worker: Worker) {
    this.#worker = worker;
    // Like PGlite in-process, an idle database keeps nothing alive; a statement in flight does.
    worker.unref();
    worker.on('message', (reply: PgliteReply) => {
      if (!('id' in reply)) return;
      const call = this.#pending.get(reply.id);
      if (!call) return;
      this.#settled(reply.id);
      if (reply.ok) call.resolve(reply.value);
      else call.reject(fromWire(reply.error));
    });
    const fail = (error: Error) => {
      // After `close()` the thread's end is the expected one: later calls hear that the database is closed.
      if (!this.#closed) this.#failure ??= error;
      this.#closed = true;
      for (const [id, call] of this.#pending) {
        this.#settled(id);
        call.reject(error);
      }
    };
    worker.on('error', (error) =>
      fail(new Error(`The embedded database's worker failed: ${error.message}`, { cause: error })),
    );
    worker.on('exit', (code) => fail(new Error(`The embedded database's worker exited (code ${code})`)));
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** One statement with `$1`-style parameters (PGlite's `query`). */
  async query<T>(sql: string, params?: unknown[], options?: PgliteWorkerQueryOptions): Promise<Results<T>> {
    return (await this.call({
      op: 'query',
      sql,
      params,
      options: forwarded(options),
      tx: undefined,
    })) as Results<T>;
  }

  /** Statements without parameters, possibly several (PGlite's `exec`): one result per statement. */
  async exec(sql: string, options?: PgliteWorkerQueryOptions): Promise<Results[]> {
    return (await this.call({ op: 'exec', sql, options: forwarded(options), tx: undefined })) as Results[];
  }

  /**
   * Runs `callback` in a transaction (PGlite's `transaction`): committed when it returns, rolled back when it
   * throws (its error is rethrown) or calls `rollback()`. Statements outside it wait until it ends.
   */
  async transaction<T>(callback: (tx: PgliteWorkerTransaction) => Promise<T>): Promise<T> {
    // The id of `begin` names the transaction in the requests made in it.
    const txId = this.#nextId;
    await this.call({ op: 'begin' });
    let closed = false;
    const open = () => {
      if (closed) throw new Error('The transaction is already closed');
    };
    const tx: PgliteWorkerTransaction = {
      query: async <R>(sql: string, params?: unknown[], options?: PgliteWorkerQueryOptions) => {
        open();
        return (await this.call({
          op: 'query',
          sql,
          params,
          options: forwarded(options),
          tx: txId,
        })) as Results<R>;
      },
      exec: async (sql, options) => {
        open();
        return (await this.call({ op: 'exec', sql, options: forwarded(options), tx: txId })) as Results[];
      },
      rollback: async () => {
        if (closed) return;
        await this.call({ op: 'rollback', tx: txId });
        closed = true;
      },
      get closed() {
        return closed;
      },
    };
    let result: T;
    try {
      result = await callback(tx);
    } catch (e) {
      closed = true;
      await this.call({ op: 'end', tx: txId, commit: false }).catch(() => undefined);
      throw e;
    }
    closed = true;
    await this.call({ op: 'end', tx: txId, commit: true });
    return result;
  }

  /** Closes PGlite (its files are consistent on disk) and ends the worker. */
  async close(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.call({ op: 'close' });
    } finally {
      this.#closed = true;
      await this.#worker.terminate();
    }
  }

  private call(request: Unnumbered<PgliteRequest>): Promise<unknown> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#closed) return Promise.reject(new Error('The embedded database is closed'));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      try {
        this.#worker.postMessage({ ...request, id });
      } catch (e) {
        // A parameter that cannot be copied to another thread (a function, a class with private state).
        reject(e instanceof Error ? e : new Error(String(e)));
        return;
      }
      if (this.#pending.size === 0) this.#worker.ref();
      this.#pending.set(id, { resolve, reject });
    });
  }

  #settled(id: number): void {
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#worker.unref();
  }
}

/** The options PGlite gets in the worker; functions (parsers, notice callbacks) cannot cross threads. */
function forwarded(options: PgliteWorkerQueryOptions | undefined): PgliteWorkerQueryOptions | undefined {
  if (!options) return undefined;
  const unsupported = Object.keys(options).filter((k) => k !== 'rowMode' && k !== 'paramTypes');
  if (unsupported.length > 0) {
    throw new Error(`PGlite in a worker does not take the query options ${unsupported.join(', ')}`);
  }
  return {
    ...(options.rowMode ? { rowMode: options.rowMode } : {}),
    ...(options.paramTypes ? { paramTypes: options.paramTypes } : {}),
  };
}

/** An error from the worker as this thread's: a PGlite `DatabaseError` with its fields when it was one. */
function fromWire(wire: PgliteWireError): Error {
  const error = wire.database
    ? new messages.DatabaseError(wire.message, 0, 'error')
    : Object.assign(new Error(wire.message), { name: wire.name });
  Object.assign(error, wire.fields);
  if (wire.stack) error.stack = wire.stack;
  return error;
}
