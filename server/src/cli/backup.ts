import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { access, cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline as pipe, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { acquireDirectoryLock } from '@notary/platform/db/dir-lock';
import type { Logger } from '@notary/platform/log';
import { AppError } from '@notary/shared';
import { ANONYMOUS_KEY_FILE, createCore, publicUrlFor } from '../bootstrap';
import type { Config } from '../config';
import type { ObjectStorage } from '../ports/storage';

const run = promisify(execFile);

/**
 * The operator's backup and restore (`npm run notary -- backup --to DIR`, `restore --from DIR`; docs/deployment.md,
 * Backup and restore). A backup is a folder: `manifest.json`, the database (`database.pgdump`, pg_dump's custom
 * format, or `pglite/`, the embedded database's files), and `objects/<key>` with `objects.tsv` (key, size, SHA-256).
 * The database is dumped first and the objects listed after it: every document row of the dump has its bytes in
 * the backup, since the service stores a file before it commits its row (objects of uploads after the dump are
 * copied too; the restored service's `storage:sweep` removes them). The secret and the keys are not in it: they are
 * named, to be kept apart.
 */
export const BACKUP_FORMAT = 'notary-backup/1';

/** `manifest.json` of a backup. */
interface Manifest {
  format: typeof BACKUP_FORMAT;
  createdAt: string;
  database: 'postgresql' | 'pglite';
  objects: number;
  bytes: number;
  keepApart: string[];
}

/** The secret and keys a restore needs and a backup does not hold, as `what<TAB>where` lines. */
async function keepApart(config: Config): Promise<string[]> {
  const exists = (file: string) =>
    access(file).then(
      () => true,
      () => false,
    );
  const waczKey = path.join(config.dataDir, ANONYMOUS_KEY_FILE);
  return [
    `secret\t${config.secret ? 'SECRET' : path.join(config.dataDir, 'secret')}`,
    ...(config.signing ? [`signing-certificate\tSIGNING_CERT, SIGNING_KEY, SIGNING_CERT_PASSWORD`] : []),
    ...((await exists(waczKey)) ? [`capture-signing-key\t${waczKey}`] : []),
    ...(config.anchoring.mode === 'configured'
      ? ['anchoring-keys\tEVM_PRIVATE_KEY, STACKS_PRIVATE_KEY']
      : []),
  ];
}

/** Where the embedded database keeps its files. */
function pgliteDir(config: Config): string {
  return path.join(config.dataDir, 'pglite');
}

/** Refuses a folder that exists with anything in it (a backup never mixes with another). */
async function assertEmptyFolder(dir: string, what: string): Promise<void> {
  const entries = await readdir(dir).catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') return [];
    throw e;
  });
  if (entries.length > 0) throw new Error(`${what} ${dir} is not empty`);
}

/** A pass-through that hashes (SHA-256) and counts what flows through it. */
function hashing(): { stream: Transform; result(): { size: number; sha256: string } } {
  const hash = createHash('sha256');
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      size += chunk.length;
      done(null, chunk);
    },
  });
  return { stream, result: () => ({ size, sha256: hash.digest('hex') }) };
}

/** Copies every stored object into `dir/objects`, listing each in `dir/objects.tsv`; @returns count and bytes. */
async function copyObjects(storage: ObjectStorage, dir: string): Promise<{ objects: number; bytes: number }> {
  const index = createWriteStream(path.join(dir, 'objects.tsv'));
  let objects = 0;
  let bytes = 0;
  try {
    for await (const info of storage.listObjects()) {
      const file = path.join(dir, 'objects', info.key);
      await mkdir(path.dirname(file), { recursive: true });
      // Deleted since the listing (an LGPD deletion, the orphan sweep): its row is gone or going too.
      const body = await storage.get(info.key).catch((e: unknown) => {
        if (e instanceof AppError && e.code === 'NOT_FOUND') return undefined;
        throw e;
      });
      if (!body) continue;
      const counted = hashing();
      await pipeline(body, counted.stream, createWriteStream(file));
      const { size, sha256 } = counted.result();
      index.write(`${info.key}\t${size}\t${sha256}\n`);
      objects++;
      bytes += size;
    }
  } finally {
    await new Promise<void>((resolve, reject) =>
      index.end((e?: Error | null) => (e ? reject(e) : resolve())),
    );
  }
  return { objects, bytes };
}

/**
 * Backs the service up into `to` (created; refused when not empty) with the service's own configuration. On
 * PostgreSQL (`DATABASE_URL`) while the service runs: `pg_dump` (one consistent snapshot), then the objects. On the
 * embedded database the service must be stopped (its lock refuses a second process): the objects, then the
 * database's files, copied under its lock.
 * @returns what the CLI prints: `database`, `objects <n> <bytes>`, then `keep-apart <what> <where>` lines.
 * @throws Error when `to` is not empty, pg_dump fails, or the embedded database is in use.
 */
export async function backup(config: Config, to: string, log: Logger): Promise<string> {
  await assertEmptyFolder(to, 'backup folder');
  await mkdir(path.join(to, 'objects'), { recursive: true, mode: 0o700 });
  const kind = config.databaseUrl ? 'postgresql' : 'pglite';
  if (config.databaseUrl) {
    await run('pg_dump', [
      '--format=custom',
      '--no-owner',
      '--no-privileges',
      `--file=${path.join(to, 'database.pgdump')}`,
      config.databaseUrl,
    ]);
  }
  const core = await createCore(config, publicUrlFor(config, config.port), { log });
  let copied: { objects: number; bytes: number };
  try {
    copied = await copyObjects(core.storage, to);
  } finally {
    await core.close();
  }
  if (kind === 'pglite') {
    // Closed cleanly above; the lock keeps a service from starting on it while its files are copied.
    const lock = await acquireDirectoryLock(pgliteDir(config));
    try {
      await cp(pgliteDir(config), path.join(to, 'pglite'), {
        recursive: true,
        filter: (src) => path.basename(src) !== 'LOCK',
      });
    } finally {
      await lock.release();
    }
  }
  const manifest: Manifest = {
    format: BACKUP_FORMAT,
    createdAt: new Date().toISOString(),
    database: kind,
    ...copied,
    keepApart: await keepApart(config),
  };
  await writeFile(path.join(to, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return [
    `database\t${kind}`,
    `objects\t${copied.objects}\t${copied.bytes}`,
    ...manifest.keepApart.map((k) => `keep-apart\t${k}`),
  ].join('\n');
}

/** The number of tables of the database at `url` outside PostgreSQL's own schemas (0: a fresh database). */
async function tableCount(url: string): Promise<number> {
  const { stdout } = await run('psql', [
    '--no-psqlrc',
    '--tuples-only',
    '--no-align',
    '--command',
    "select count(*) from pg_tables where schemaname not in ('pg_catalog', 'information_schema')",
    url,
  ]);
  return Number(stdout.trim());
}

/**
 * Restores the backup in `from` into the fresh database and object store the service's configuration names (a
 * database without tables, or a `DATA_DIR` without an embedded database; a store without objects), the service
 * stopped. The secret must be the backed-up service's (`SECRET`, or `DATA_DIR/secret` put back first): the
 * identity provider's keys are sealed with it.
 * @returns what the CLI prints: `database <kind>`, `objects <n> <bytes>`.
 * @throws Error when the backup is not one, the database or store is not fresh, the secret is missing, or an
 *   object's bytes do not hash to what the backup recorded.
 */
export async function restore(config: Config, from: string, log: Logger): Promise<string> {
  const manifest = JSON.parse(await readFile(path.join(from, 'manifest.json'), 'utf8')) as Manifest;
  if (manifest.format !== BACKUP_FORMAT) throw new Error(`${from} is not a ${BACKUP_FORMAT} backup`);
  if (manifest.database !== (config.databaseUrl ? 'postgresql' : 'pglite')) {
    throw new Error(`the backup holds a ${manifest.database} database; the configuration names another`);
  }
  const secretFile = path.join(config.dataDir, 'secret');
  if (!config.secret && !(await readFile(secretFile, 'utf8').catch(() => ''))) {
    throw new Error(`restore needs the backed-up service's secret: set SECRET or put it in ${secretFile}`);
  }
  if (config.databaseUrl) {
    if ((await tableCount(config.databaseUrl)) > 0)
      throw new Error('the database of DATABASE_URL is not empty');
    await run('pg_restore', [
      '--no-owner',
      '--no-privileges',
      '--exit-on-error',
      `--dbname=${config.databaseUrl}`,
      path.join(from, 'database.pgdump'),
    ]);
  } else {
    await assertEmptyFolder(pgliteDir(config), 'the embedded database');
    await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
    await cp(path.join(from, 'pglite'), pgliteDir(config), { recursive: true });
  }
  const core = await createCore(config, publicUrlFor(config, config.port), { log });
  try {
    for await (const _ of core.storage.list()) throw new Error('the object store is not empty');
    const index = await readFile(path.join(from, 'objects.tsv'), 'utf8');
    let objects = 0;
    let bytes = 0;
    for (const line of index.split('\n').filter((l) => l !== '')) {
      const [key = '', size = '', sha256 = ''] = line.split('\t');
      const counted = hashing();
      // The read's errors reach the put through the pass-through, which the pipe destroys with them.
      const body = pipe(createReadStream(path.join(from, 'objects', key)), counted.stream, () => {});
      const stored = await core.storage.put(key, body);
      if (counted.result().sha256 !== sha256 || stored.size !== Number(size)) {
        throw new Error(`object ${key} of the backup does not hash to what was recorded`);
      }
      objects++;
      bytes += stored.size;
    }
    return [`database\t${manifest.database}`, `objects\t${objects}\t${bytes}`].join('\n');
  } finally {
    await core.close();
  }
}
