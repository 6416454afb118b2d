import { ormOptions } from '@notary/platform/db/orm-options';
import { entities } from './entities';
import { migrationsList } from './migrations';

/** MikroORM options shared by the PostgreSQL and PGlite drivers (see `ormOptions`), plus the schema diff's scope. */
export const baseOrmOptions = {
  ...ormOptions({
    entities,
    migrationsList,
    migrationsDir: new URL('./migrations', import.meta.url).pathname,
  }),
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
};
