import { Migrator } from '@mikro-orm/migrations';
import { entities } from './entities';
import { migrationsList } from './migrations';

/**
 * MikroORM options shared by the PostgreSQL and PGlite drivers. Migrations are listed explicitly
 * (`migrationsList`) so they load the same under tsx, vitest and a bundle, without directory globbing.
 */
export const baseOrmOptions = {
  entities,
  extensions: [Migrator],
  migrations: {
    migrationsList,
    path: new URL('./migrations', import.meta.url).pathname,
    pathTs: new URL('./migrations', import.meta.url).pathname,
    transactional: true,
    allOrNothing: true,
    snapshot: false,
    silent: true,
  },
  schemaGenerator: {
    // better-auth keeps its tables beside ours; never let a schema diff drop them.
    skipTables: [
      'user',
      'session',
      'account',
      'verification',
      'jwks',
      'organization',
      'member',
      'invitation',
      'walletAddress',
    ],
    skipSchemas: ['pgboss', 'auth'],
  },
  allowGlobalContext: false,
  debug: false,
};
