import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { cp, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { type Database, openDatabase } from '@notary/server/db/index';
import { startJobQueue } from '@notary/server/jobs/boss';
import pg from 'pg';
import { createTestDatabase, PG_ADMIN_URL, type TestDatabase } from './postgres';

/**
 * Migrated databases for tests, made once per schema and copied for each test that needs a fresh one.
 *
 * The embedded database (PGlite's data directory). initdb and the service's migrations cost seconds of WebAssembly work on every open; a copy
 * of the 40 MB directory they leave costs a fraction of one, and opening it then runs no migration. The copy is
 * the same cluster the service would have made itself, so what a test sees does not change; tests of the first
 * start itself (initdb, the reopen after it) start on an empty directory instead.
 *
 * The template also holds the job queue's schema, which pg-boss makes on its first start.
 *
 * PostgreSQL: a template database (`CREATE DATABASE … TEMPLATE`), migrated once, with the job queue's schema.
 *
 * Each template is named by a key of everything that shapes it (the migrations' sources, the PGlite release,
 * this file): a changed migration makes a new one. Test workers that ask at once may each build one; the first
 * rename into place wins and the others are discarded.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const MIGRATIONS = path.join(root, 'server/src/db/migrations');

const DUMP = 'pglite.tar';

let template: Promise<string> | undefined;

/**
 * Where test data directories go: `NOTARY_TEST_TMPDIR`, else Linux's memory-backed `/dev/shm` when it is there,
 * else the system's temporary directory. A service's data directory holds a thousand small files of PGlite's:
 * made in memory they cost a fifth of what they cost on the disk.
 */
export function testTempRoot(): string {
  const chosen = process.env.NOTARY_TEST_TMPDIR;
  if (chosen) return chosen;
  return existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir();
}

async function templateKey(): Promise<string> {
  const hash = createHash('sha256');
  for (const name of (await readdir(MIGRATIONS)).sort()) {
    hash.update(name).update(await readFile(path.join(MIGRATIONS, name)));
  }
  const pglite = path.join(root, 'node_modules/@electric-sql/pglite/package.json');
  hash.update(await readFile(pglite)).update(await readFile(fileURLToPath(import.meta.url)));
  return hash.digest('hex').slice(0, 16);
}

async function buildPgliteTemplate(): Promise<string> {
  const target = path.join(testTempRoot(), `notary-db-templates-${await templateKey()}`);
  if (existsSync(path.join(target, 'pglite', 'PG_VERSION'))) return target;
  const build = await mkdtemp(path.join(testTempRoot(), 'notary-pglite-build-'));
  try {
    const db = await openDatabase({ databaseUrl: undefined, dataDir: build });
    // pg-boss makes its own schema on its first start: every service starts a job queue.
    const jobs = await startJobQueue(db, undefined);
    await jobs.stop();
    await db.close();
    // The same cluster as a tar, for PGlite in memory (`loadDataDir`).
    const pglite = await PGlite.create({ dataDir: path.join(build, 'pglite') });
    const dump = await pglite.dumpDataDir('none');
    await pglite.close();
    await writeFile(path.join(build, DUMP), Buffer.from(await dump.arrayBuffer()));
    await rename(build, target);
  } catch (e) {
    await rm(build, { recursive: true, force: true });
    // Another worker renamed its build into place first: theirs is as good as ours.
    if (!existsSync(path.join(target, 'pglite', 'PG_VERSION'))) throw e;
  }
  return target;
}

/**
 * Puts a migrated embedded database in `dataDir` (as `dataDir/pglite`, where the service opens it), copied from
 * the template. `dataDir` must not hold one yet.
 */
export async function seedPglite(dataDir: string): Promise<void> {
  template ??= buildPgliteTemplate();
  await cp(path.join(await template, 'pglite'), path.join(dataDir, 'pglite'), { recursive: true });
}

/** The template as PGlite's own tar dump (`dumpDataDir`), for `PGlite.create({ loadDataDir })` in memory. */
export async function templateDump(): Promise<Blob> {
  template ??= buildPgliteTemplate();
  return new Blob([await readFile(path.join(await template, DUMP))]);
}

/**
 * A fresh, migrated embedded database of the service in its own temporary directory (PGlite in its worker
 * thread, as the service runs it); `close()` closes it and removes the directory.
 */
export async function openTestPglite(): Promise<Database> {
  const dataDir = await mkdtemp(path.join(testTempRoot(), `notary-db-${randomBytes(3).toString('hex')}-`));
  await seedPglite(dataDir);
  const db = await openDatabase({ databaseUrl: undefined, dataDir });
  return {
    ...db,
    close: async () => {
      await db.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

let pgTemplate: Promise<string> | undefined;

async function buildPostgresTemplate(): Promise<string> {
  const target = `notary_template_${await templateKey()}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [target]);
    if (found.rowCount) return target;
    const build = `notary_tbuild_${randomBytes(6).toString('hex')}`;
    await admin.query(`CREATE DATABASE ${build}`);
    try {
      const url = new URL(PG_ADMIN_URL);
      url.pathname = `/${build}`;
      const db = await openDatabase({ databaseUrl: url.toString(), dataDir: '' });
      const jobs = await startJobQueue(db, url.toString());
      await jobs.stop();
      await db.close();
      // A pool's last connection may still be closing: nothing else may be connected for the rename.
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [build]);
      await admin.query(`ALTER DATABASE ${build} RENAME TO ${target}`);
    } catch (e) {
      await admin.query(`DROP DATABASE IF EXISTS ${build} WITH (FORCE)`);
      // Another worker renamed its build into place first: theirs is as good as ours.
      const won = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [target]);
      if (!won.rowCount) throw e;
    }
    return target;
  } finally {
    await admin.end();
  }
}

/**
 * A throwaway PostgreSQL database at the service's latest schema, copied from the migrated template
 * (`createTestDatabase`'s shape: `drop()` removes it).
 */
export function createMigratedTestDatabase(): Promise<TestDatabase> {
  pgTemplate ??= buildPostgresTemplate();
  return createTestDatabase({ template: pgTemplate });
}

/**
 * Builds both templates before the suite's workers start (vitest's `globalSetup`), so that they do not each
 * build their own at once. PostgreSQL not running is not an error here: the tests that need it say so.
 */
export async function buildTemplates(): Promise<void> {
  template ??= buildPgliteTemplate();
  pgTemplate ??= buildPostgresTemplate();
  await Promise.all([template, pgTemplate.catch(() => undefined)]);
}
