import { existsSync } from 'node:fs';
import path from 'node:path';
import type { MikroORM as PgliteORM } from '@mikro-orm/pglite';
import type { MikroORM as PostgresORM } from '@mikro-orm/postgresql';
import type { SqlEntityManager } from '@mikro-orm/sql';
import type { Pool, PoolClient } from 'pg';
import { acquireDirectoryLock, type DirectoryLock, type LockHolder } from './dir-lock';
import type { ServiceOrmOptions } from './orm-options';
import type { PgliteWorker } from './pglite-worker';

export type Orm = PostgresORM | PgliteORM;

/**
 * Server settings of the embedded PGlite database, as `postgres -c` options (the data directory's
 * `postgresql.conf` is left as initdb wrote it). PGlite's Postgres touches all of `shared_buffers` when it
 * starts, inside the WebAssembly memory: initdb's 128 MB were 120 MB of the service's idle RSS. 16 MB holds
 * the catalog and the hot pages of a small deployment; colder pages come from the files through the OS page
 * cache (no slowdown measured against 128 MB: docs/benchmarks.md, Memory and start-up). Durability
 * settings are untouched (fsync stays on).
 */
const PGLITE_SETTINGS = ['-c', 'shared_buffers=16MB'];

export interface Database {
  orm: Orm;
  kind: 'postgresql' | 'pglite';
  /** A fresh EntityManager (one per request or job: MikroORM's unit of work is not shared). */
  fork(): SqlEntityManager;
  close(): Promise<void>;
}

/** Where a service's database is, as its configuration says. */
export interface DatabaseLocation {
  /** `postgres://...`; when undefined the embedded PGlite database under `dataDir/pglite` is used. */
  databaseUrl: string | undefined;
  dataDir: string;
  /** In-memory PGlite (tests): no directory, no lock. */
  memory?: boolean;
  /** Apply pending migrations (default true). */
  migrate?: boolean;
}

export interface OpenDatabaseOptions extends DatabaseLocation {
  /** The service's MikroORM options (`ormOptions`): entities and migrations. */
  ormOptions: ServiceOrmOptions;
  /**
   * Bigint key of the PostgreSQL session advisory lock taken while migrating: one constant per service, so
   * that services sharing a database do not wait on each other's migrations.
   */
  migrationLockKey: number;
  /** Message of the `DirectoryLockedError` when another process holds the PGlite directory. */
  lockedMessage?: (holder: LockHolder) => string;
}

/**
 * Opens a service's database and applies its pending migrations (unless `migrate` is false).
 * PostgreSQL: migrations run under a session advisory lock (`migrationLockKey`) so that several instances
 * starting together apply them once; the ORM is closed again when they fail. PGlite: one process per data
 * directory (a second one would silently lose writes), enforced by a lock file in `dataDir/pglite`.
 * @throws DirectoryLockedError (code EDATADIRLOCKED) when another live process holds the PGlite directory;
 *   the driver's and the migrator's errors as they are.
 */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const migrate = options.migrate ?? true;
  // Each driver is loaded once chosen: a service keeps only its own database's code in memory.
  if (options.databaseUrl) {
    const postgres = await import('@mikro-orm/postgresql');
    const orm = await postgres.MikroORM.init({
      ...options.ormOptions,
      clientUrl: options.databaseUrl,
      driverOptions: { onPoolCreated: releaseBrokenConnections },
    });
    try {
      if (migrate) await migratePostgres(orm, options.databaseUrl, options.migrationLockKey);
    } catch (e) {
      await orm.close();
      throw e;
    }
    return { orm, kind: 'postgresql', fork: () => orm.em.fork(), close: () => orm.close() };
  }
  let lock: DirectoryLock | undefined;
  let dbName = 'memory://';
  let fresh = false;
  if (!options.memory) {
    const dir = path.join(options.dataDir, 'pglite');
    lock = await acquireDirectoryLock(dir, { lockedMessage: options.lockedMessage });
    dbName = dir;
    fresh = !existsSync(path.join(dir, 'PG_VERSION'));
  }
  try {
    let opened = await openPglite(options, dbName, migrate);
    if (fresh) {
      // initdb and the first migrations grow PGlite's WebAssembly memory, which never shrinks: started again
      // on the directory they wrote, the database idles as after any restart (about 80 MB less).
      await opened.close();
      opened = await openPglite(options, dbName, false);
    }
    const { orm, close } = opened;
    return {
      orm,
      kind: 'pglite',
      fork: () => orm.em.fork(),
      close: async () => {
        await close();
        await lock?.release();
      },
    };
  } catch (e) {
    await lock?.release();
    throw e;
  }
}

/** PGlite in its worker thread with MikroORM over it, migrated when `migrate`; closed again on failure. */
async function openPglite(
  options: OpenDatabaseOptions,
  dbName: string,
  migrate: boolean,
): Promise<{ orm: PgliteORM; close: () => Promise<void> }> {
  const [{ PGlite }, embedded, { openPgliteWorker }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@mikro-orm/pglite'),
    import('./pglite-worker'),
  ]);
  // PGlite runs in its own thread (pglite-worker.ts): its start and its statements never hold up this
  // thread's event loop. MikroORM is handed that instance; closing it stays ours (`close` below).
  const worker: PgliteWorker = await openPgliteWorker({
    dataDir: dbName,
    startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS],
  });
  try {
    // A factory, not the object: MikroORM copies plain option values, which a class instance does not survive.
    const orm = await embedded.MikroORM.init({
      ...options.ormOptions,
      dbName,
      driverOptions: { pglite: () => worker },
    });
    if (migrate) {
      await orm.migrator.up().catch(async (e: unknown) => {
        await orm.close();
        throw e;
      });
    }
    return {
      orm,
      close: async () => {
        await orm.close();
        await worker.close();
      },
    };
  } catch (e) {
    await worker.close().catch(() => undefined);
    throw e;
  }
}

/**
 * Gives a pooled connection that dies while it is checked out (PostgreSQL restarting or unreachable under a
 * transaction) back to its pool as broken, so the pool drops it and opens another. Kysely's rollback of a
 * transaction releases the connection only when the ROLLBACK succeeds, which on a dead connection it never
 * does: without this, every transaction a restart cuts keeps its connection checked out for ever, until the
 * pool (node-postgres' default: 10 connections) is exhausted, every query waits and closing the service hangs.
 * A later release of the same checkout does nothing. node-postgres emits `error` on the client for a dead
 * socket and an unexpected end alike; `pg-pool` emits `acquire` and `release` around each checkout.
 */
function releaseBrokenConnections(pool: Pool): void {
  const checkedOut = new WeakSet<PoolClient>();
  pool.on('acquire', (client) => checkedOut.add(client));
  pool.on('release', (_err, client) => checkedOut.delete(client));
  pool.on('connect', (client) => {
    client.on('error', (err) => {
      if (!checkedOut.has(client)) return;
      checkedOut.delete(client);
      const release = client.release;
      client.release = () => undefined;
      release(err);
    });
  });
}

async function migratePostgres(orm: PostgresORM, databaseUrl: string, lockKey: number): Promise<void> {
  // The lock lives on its own connection: the migrator runs on the pool, and a session lock must stay held
  // by one connection from acquisition to release.
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [lockKey]);
    await orm.migrator.up();
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [lockKey]).catch(() => undefined);
    await client.end();
  }
}
