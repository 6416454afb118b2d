import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { LoggerNamespace } from '@mikro-orm/core';
import { MikroORM as PgliteORM } from '@mikro-orm/pglite';
import { templateDump } from '../../../test/harness/db-templates';
import { baseOrmOptions } from './orm-config';

/**
 * A fresh in-memory PGlite database behind MikroORM, at the latest schema (a copy of the migrated template), for tests that need the
 * service's tables without a service. It loads the same PGlite extensions as the service's database thread
 * (`pg_trgm`, whose trigram indexes a migration creates). `options` adds to the service's ORM options (a query
 * logger, debug flags). The caller closes it.
 */
export async function openMemoryOrm(
  options: { debug?: LoggerNamespace[]; logger?: (message: string) => void } = {},
): Promise<PgliteORM> {
  // Loaded from the migrated template rather than initdb and every migration (test/harness/db-templates.ts).
  const pglite = await PGlite.create({ loadDataDir: await templateDump(), extensions: { pg_trgm } });
  const orm = await PgliteORM.init({
    ...baseOrmOptions,
    ...options,
    dbName: 'memory://',
    driverOptions: { pglite: () => pglite },
  });
  // The ORM may not close a PGlite it was handed.
  const closeOrm = orm.close.bind(orm);
  orm.close = async (force?: boolean) => {
    await closeOrm(force);
    if (!pglite.closed) await pglite.close();
  };
  try {
    await orm.migrator.up();
  } catch (e) {
    await orm.close();
    throw e;
  }
  return orm;
}
