import type { AnyEntity, EntityClass, EntitySchema, MigrationObject } from '@mikro-orm/core';
import { Migrator } from '@mikro-orm/migrations';

export interface OrmOptionsInput<Entities> {
  entities: Entities;
  /** Every migration in order (the service's generated `migrations/index.ts`). */
  migrationsList: MigrationObject[];
  /** Absolute path of the migrations directory (where `createMigration` writes new ones). */
  migrationsDir: string;
  /** Table recording applied migrations (MikroORM's default `mikro_orm_migrations` when unset). */
  migrationsTable?: string;
}

/**
 * MikroORM options of a service, for the PostgreSQL and the PGlite drivers alike (the driver-specific
 * `clientUrl` or `dbName` is added by `openDatabase`). Migrations are listed explicitly (`migrationsList`) so
 * they load the same under tsx, vitest and a bundle, without directory globbing; each runs in a transaction
 * and a batch applies all or nothing. A service adds its own extras (e.g. `schemaGenerator`) to the result.
 */
export function ormOptions<Entities extends (EntityClass<AnyEntity> | EntitySchema)[]>(
  input: OrmOptionsInput<Entities>,
) {
  return {
    entities: input.entities,
    extensions: [Migrator],
    migrations: {
      migrationsList: input.migrationsList,
      // Only when set: an explicit undefined would replace MikroORM's default table name.
      ...(input.migrationsTable ? { tableName: input.migrationsTable } : {}),
      path: input.migrationsDir,
      pathTs: input.migrationsDir,
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
    },
    allowGlobalContext: false,
    debug: false,
  };
}

/** What `openDatabase` and `createMigration` need of a service's MikroORM options. */
export type ServiceOrmOptions = ReturnType<typeof ormOptions> & {
  schemaGenerator?: { skipTables?: string[]; skipSchemas?: string[] };
};
