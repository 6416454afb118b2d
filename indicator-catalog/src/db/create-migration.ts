/**
 * Generates a migration from the entity definitions, diffed against PostgreSQL 15 (DEPENDENCIES.md: generate
 * against PostgreSQL, test on both). Uses a throwaway database on `MIGRATION_PG_URL`
 * (default postgres://postgres@127.0.0.1:5432/postgres), brought to the current migrations first.
 * Usage: `npm run db:migration:create -w @notary/indicator-catalog`.
 */
import { createMigration } from '@notary/platform/db/create-migration';
import { baseOrmOptions } from './orm-config';

await createMigration({
  ormOptions: baseOrmOptions,
  databasePrefix: 'catalog_migration',
  command: 'npm run db:migration:create -w @notary/indicator-catalog',
});
