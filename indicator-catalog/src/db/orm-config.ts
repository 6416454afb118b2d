import { ormOptions } from '@notary/platform/db/orm-options';
import { entities } from './entities';
import { migrationsList } from './migrations';

/**
 * MikroORM options shared by the PostgreSQL and PGlite drivers (see `ormOptions`). The migration table is the
 * catalog's own, so the catalog can share a PostgreSQL database with the notarization service.
 */
export const baseOrmOptions = ormOptions({
  entities,
  migrationsList,
  migrationsDir: new URL('./migrations', import.meta.url).pathname,
  migrationsTable: 'catalog_mikro_orm_migrations',
});
