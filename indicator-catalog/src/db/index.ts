import {
  type Database,
  type DatabaseLocation,
  openDatabase as openServiceDatabase,
} from '@notary/platform/db/database';
import { catalogLockedMessage } from './dir-lock';
import { baseOrmOptions } from './orm-config';

export type { Database } from '@notary/platform/db/database';

/**
 * Opens the catalog database and applies pending migrations, always (`@notary/platform` `openDatabase`).
 * PostgreSQL: migrations run under a session advisory lock, so several instances starting together apply
 * them once. PGlite: one process per data directory (a second one would silently lose writes), enforced by
 * a lock file; @throws DirectoryLockedError (code EDATADIRLOCKED) when another live process holds it.
 */
export function openDatabase(options: Omit<DatabaseLocation, 'migrate'>): Promise<Database> {
  return openServiceDatabase({
    ...options,
    ormOptions: baseOrmOptions,
    // Arbitrary constant naming the catalog's migration advisory lock (not the notarization service's).
    migrationLockKey: 7_310_224_119,
    lockedMessage: catalogLockedMessage,
  });
}
