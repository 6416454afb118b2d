import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import type { ServiceOrmOptions } from './orm-options';

export interface CreateMigrationOptions {
  /** The service's MikroORM options; the migration goes to their `migrations.path`. */
  ormOptions: ServiceOrmOptions;
  /** Prefix of the throwaway database's name (`<prefix>_<ms timestamp>`), e.g. `notary_migration`. */
  databasePrefix: string;
  /** The command that regenerates the list, named in the docstring of the generated `migrations/index.ts`. */
  command: string;
  /** Admin connection of the PostgreSQL server (default `MIGRATION_PG_URL`, else the local server). */
  adminUrl?: string;
}

/**
 * Generates a migration from a service's entity definitions, diffed against PostgreSQL 15, the older of the two engines
 * the services run on (PGlite is PostgreSQL 18), so that its SQL suits both; every migration is tested on both. Uses a
 * throwaway database on `adminUrl`, brought to the current migrations first, and dropped at the end whatever happens.
 * Prints `No schema changes.` or `Created <file>`; in the latter case rewrites `migrations/index.ts` (the explicit,
 * ordered `migrationsList`) from the directory's files.
 * A developer tool, not a service: it reads its one variable (`MIGRATION_PG_URL`) directly.
 * @throws the PostgreSQL client's and the migrator's errors as they are.
 */
export async function createMigration(options: CreateMigrationOptions): Promise<void> {
  const adminUrl =
    options.adminUrl ?? process.env.MIGRATION_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const dbName = `${options.databasePrefix}_${Date.now()}`;
  const dir = options.ormOptions.migrations.path;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${dbName}`);
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  try {
    const orm = await MikroORM.init({ ...options.ormOptions, clientUrl: url.toString() });
    await orm.migrator.up();
    const result = await orm.migrator.create(dir, false, false);
    await orm.close();
    // The command's own output (`npm run db:migration:create`), not a log line.
    if (!result.fileName) {
      process.stdout.write('No schema changes.\n');
    } else {
      process.stdout.write(`Created ${result.fileName}\n`);
      await writeMigrationIndex(dir, options.command);
    }
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
  }
}

async function writeMigrationIndex(dir: string, command: string): Promise<void> {
  const files = (await readdir(dir)).filter((f) => /^Migration\d+.*\.ts$/.test(f)).sort();
  const imports = files.map(
    (f, i) => `import { ${path.basename(f, '.ts')} as m${i} } from './${path.basename(f, '.ts')}';`,
  );
  const list = files.map((f, i) => `  { name: '${path.basename(f, '.ts')}', class: m${i} },`);
  await writeFile(
    path.join(dir, 'index.ts'),
    `import type { MigrationObject } from '@mikro-orm/core';\n${imports.join('\n')}\n\n/** Every migration in order. \`${command}\` regenerates this list. */\nexport const migrationsList: MigrationObject[] = [\n${list.join('\n')}\n];\n`,
  );
}
