import path from 'node:path';
import { MikroORM as PgliteORM } from '@mikro-orm/pglite';
import { MikroORM as PostgresORM } from '@mikro-orm/postgresql';
import type { SqlEntityManager } from '@mikro-orm/sql';
import pg from 'pg';
import { acquireDirectoryLock, type DirectoryLock } from './dir-lock';
import { baseOrmOptions } from './orm-config';

export type Orm = PostgresORM | PgliteORM;

export interface Database {
  orm: Orm;
  kind: 'postgresql' | 'pglite';
  /** A fresh EntityManager (one per request or job: MikroORM's unit of work is not shared). */
  fork(): SqlEntityManager;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  /** `postgres://...`; when undefined the embedded PGlite database under `dataDir/pglite` is used. */
  databaseUrl: string | undefined;
  dataDir: string;
  /** In-memory PGlite (tests): no directory, no lock. */
  memory?: boolean;
}

/** Arbitrary constant naming the catalog's migration advisory lock (not the notarization service's). */
const MIGRATION_LOCK_KEY = 7_310_224_119;

/**
 * Opens the catalog database and applies pending migrations.
 * PostgreSQL: migrations run under a session advisory lock, so several instances starting together apply
 * them once. PGlite: one process per data directory (a second one would silently lose writes), enforced by
 * a lock file; @throws DirectoryLockedError (code EDATADIRLOCKED) when another live process holds it.
 */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const orm = await PostgresORM.init({ ...baseOrmOptions, clientUrl: options.databaseUrl });
    try {
      await migratePostgres(orm, options.databaseUrl);
    } catch (e) {
      await orm.close();
      throw e;
    }
    return { orm, kind: 'postgresql', fork: () => orm.em.fork(), close: () => orm.close() };
  }
  let lock: DirectoryLock | undefined;
  let dbName = 'memory://';
  if (!options.memory) {
    const dir = path.join(options.dataDir, 'pglite');
    lock = await acquireDirectoryLock(dir);
    dbName = dir;
  }
  try {
    const orm = await PgliteORM.init({ ...baseOrmOptions, dbName });
    await orm.migrator.up();
    return {
      orm,
      kind: 'pglite',
      fork: () => orm.em.fork(),
      close: async () => {
        await orm.close();
        await lock?.release();
      },
    };
  } catch (e) {
    await lock?.release();
    throw e;
  }
}

async function migratePostgres(orm: PostgresORM, databaseUrl: string): Promise<void> {
  // The lock lives on its own connection: a session lock must stay with one connection from acquisition to
  // release, and the migrator runs on the pool.
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await orm.migrator.up();
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await client.end();
  }
}
