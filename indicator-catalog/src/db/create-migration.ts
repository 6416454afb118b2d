/**
 * Generates a migration from the entity definitions, diffed against PostgreSQL 15 (DEPENDENCIES.md: generate
 * against PostgreSQL, test on both). Uses a throwaway database on `MIGRATION_PG_URL`
 * (default postgres://postgres@127.0.0.1:5432/postgres), brought to the current migrations first.
 * Usage: `npm run db:migration:create -w @notary/indicator-catalog`.
 */
import { readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import pg from 'pg';
import { baseOrmOptions } from './orm-config';

// A developer tool, not the service: it reads its one variable directly (the service reads config.ts).
const adminUrl = process.env.MIGRATION_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `catalog_migration_${Date.now()}`;
const admin = new pg.Client({ connectionString: adminUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
const url = new URL(adminUrl);
url.pathname = `/${dbName}`;
const dir = new URL('./migrations', import.meta.url).pathname;
try {
  const orm = await MikroORM.init({ ...baseOrmOptions, clientUrl: url.toString() });
  await orm.migrator.up();
  const result = await orm.migrator.create(dir, false, false);
  await orm.close();
  if (!result.fileName) {
    console.log('No schema changes.');
  } else {
    console.log(`Created ${result.fileName}`);
    const files = (await readdir(dir)).filter((f) => /^Migration\d+.*\.ts$/.test(f)).sort();
    const imports = files.map(
      (f, i) => `import { ${path.basename(f, '.ts')} as m${i} } from './${path.basename(f, '.ts')}';`,
    );
    const list = files.map((f, i) => `  { name: '${path.basename(f, '.ts')}', class: m${i} },`);
    await writeFile(
      path.join(dir, 'index.ts'),
      `import type { MigrationObject } from '@mikro-orm/core';\n${imports.join('\n')}\n\n/** Every migration in order. \`npm run db:migration:create -w @notary/indicator-catalog\` regenerates this list. */\nexport const migrationsList: MigrationObject[] = [\n${list.join('\n')}\n];\n`,
    );
  }
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
}
