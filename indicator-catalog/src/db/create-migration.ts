/**
 * Generates a migration from the entity definitions, diffed against PostgreSQL 15, the older of the two engines the
 * catalog runs on (PGlite is PostgreSQL 18), so that its SQL suits both; every migration is tested on both. Uses a
 * throwaway database on `MIGRATION_PG_URL` (default postgres://postgres@127.0.0.1:5432/postgres), brought to the
 * current migrations first.
 * Usage: `npm run db:migration:create -w @notary/indicator-catalog`.
 */
import { createMigration } from '@notary/platform/db/create-migration';
import { baseOrmOptions } from './orm-config';

await createMigration({
  ormOptions: baseOrmOptions,
  databasePrefix: 'catalog_migration',
  command: 'npm run db:migration:create -w @notary/indicator-catalog',
});
