import {
  type Database,
  type DatabaseLocation,
  openDatabase as openServiceDatabase,
} from '@notary/platform/db/database';
import { baseOrmOptions } from './orm-config';

export type { Database } from '@notary/platform/db/database';

/**
 * Opens the service's database and applies pending migrations (`@notary/platform` `openDatabase`).
 * PostgreSQL: migrations run under a session advisory lock so that several instances starting together apply
 * them once. PGlite: one process per data directory (a second one would silently lose writes), enforced by a
 * lock file; the caller gets an Error with code `EDATADIRLOCKED` when another live process holds it.
 */
export function openDatabase(options: DatabaseLocation): Promise<Database> {
  return openServiceDatabase({
    ...options,
    ormOptions: baseOrmOptions,
    // Arbitrary constant naming the migration advisory lock (bigint key of `pg_advisory_lock`).
    migrationLockKey: 7_310_224_118,
    lockedMessage: ({ dir, pid }) => `The embedded database in ${dir} is in use by process ${pid}`,
  });
}
