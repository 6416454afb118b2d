import { Migrator } from '@mikro-orm/migrations';
import { entities } from './entities';
import { migrationsList } from './migrations';

/**
 * MikroORM options shared by the PostgreSQL and PGlite drivers. Migrations are listed explicitly so they
 * load the same under tsx, vitest and a bundle. The migration table is the catalog's own, so the catalog can
 * share a PostgreSQL database with the notarization service.
 */
export const baseOrmOptions = {
  entities,
  extensions: [Migrator],
  migrations: {
    migrationsList,
    tableName: 'catalog_mikro_orm_migrations',
    path: new URL('./migrations', import.meta.url).pathname,
    pathTs: new URL('./migrations', import.meta.url).pathname,
    transactional: true,
    allOrNothing: true,
    snapshot: false,
    silent: true,
  },
  allowGlobalContext: false,
  debug: false,
};
