import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { LoggerNamespace } from '@mikro-orm/core';
import { MikroORM as PgliteORM } from '@mikro-orm/pglite';
import { baseOrmOptions } from './orm-config';

/**
 * A fresh in-memory PGlite database behind MikroORM, migrated to the latest schema, for tests that need the
 * service's tables without a service. It loads the same PGlite extensions as the service's database thread
 * (`pg_trgm`, whose trigram indexes a migration creates). `options` adds to the service's ORM options (a query
 * logger, debug flags). The caller closes it.
 */
export async function openMemoryOrm(
  options: { debug?: LoggerNamespace[]; logger?: (message: string) => void } = {},
): Promise<PgliteORM> {
  const orm = await PgliteORM.init({
    ...baseOrmOptions,
    ...options,
    dbName: 'memory://',
    driverOptions: { extensions: { pg_trgm } },
  });
  try {
    await orm.migrator.up();
  } catch (e) {
    await orm.close();
    throw e;
  }
  return orm;
}
