/**
 * Creation and extension of better-auth's tables, serialized across instances on PostgreSQL.
 */
import type { BetterAuthOptions } from 'better-auth';
import { getMigrations } from 'better-auth/db/migration';
import { sql } from 'kysely';
import type { AnyKysely } from './options';

/** Advisory lock key (bigint) serializing better-auth migrations across instances; arbitrary constant. */
const MIGRATION_LOCK_KEY = '7310224119';

/**
 * Runs better-auth's migrations for `authOptions` on `db` (idempotent): directly on PGlite, under a PostgreSQL
 * advisory lock otherwise, so that instances starting together take turns.
 */
export async function migrateAuthTables(authOptions: BetterAuthOptions, db: AnyKysely): Promise<void> {
  // Through `authOptions` itself, never a copy: should the instance already exist and have recorded
  // "tables missing", only a migration run on the same `database` object clears that verdict (so no
  // transaction-bound copy either).
  const run = async () => (await getMigrations(authOptions)).runMigrations();
  const version = await sql<{ version: string }>`SELECT version() AS version`.execute(db);
  if (/PGlite/i.test(version.rows[0]?.version ?? '')) {
    // Embedded: one process per data directory and a single connection; a lock held on it would block
    // the migration's own queries.
    await run();
    return;
  }
  // PostgreSQL: instances starting together take turns; the session lock is held by one pooled connection
  // while the migration uses others.
  await db.connection().execute(async (conn) => {
    await sql`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY}::bigint)`.execute(conn);
    try {
      await run();
    } finally {
      await sql`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY}::bigint)`.execute(conn);
    }
  });
}
