/**
 * A PostgreSQL cluster of a test's own (`initdb` + `pg_ctl` from Debian's `/usr/lib/postgresql/<major>/bin`), on
 * 127.0.0.1 and a free port in a temp directory, trust authentication, so a test may restart or stop it without
 * touching the machine's server. Run as the `postgres` account when this process is root (PostgreSQL refuses
 * to run as root), through `runuser`.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import os, { userInfo } from 'node:os';
import path from 'node:path';

export interface PgCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  url: string;
  /** `pg_ctl restart -m fast`: every connection is cut, the server is back when this resolves. */
  restart(): Promise<void>;
  /** `pg_ctl stop -m immediate` and the directory removed (also done when this process dies). Idempotent. */
  stop(): Promise<void>;
}

/** The `bin` directory of the newest PostgreSQL installed, or undefined. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .filter((d) => existsSync(path.join(root, d, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] ? path.join(root, majors[0], 'bin') : undefined;
}

/**
 * Creates and starts the cluster. @throws Error when PostgreSQL's server binaries are not installed or a
 * command fails (its stderr in the message).
 */
export async function startPgCluster(): Promise<PgCluster> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'notary-pg-'));
  const asRoot = userInfo().uid === 0;
  if (asRoot) {
    const { uid, gid } = await accountIds('postgres');
    await chown(dir, uid, gid);
  }
  await chmod(dir, 0o700);
  const data = path.join(dir, 'data');
  const port = await freePort();
  const pgRun = (tool: string, args: string[]) =>
    run(
      asRoot ? 'runuser' : path.join(bin, tool),
      asRoot ? ['-u', 'postgres', '--', path.join(bin, tool), ...args] : args,
    );
  await pgRun('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const ctl = (...args: string[]) =>
    pgRun('pg_ctl', ['-D', data, '-l', path.join(dir, 'log'), '-w', '-t', '60', ...args]);
  await ctl('-o', options, 'start');
  // pg_ctl leaves the server detached: a shell outliving this process stops it (immediate) and removes the
  // directory, whether this process exits, crashes or is killed.
  const pgCtl = path.join(bin, 'pg_ctl');
  const stopCommand = asRoot
    ? `runuser -u postgres -- ${pgCtl} -D "$2/data" -m immediate stop`
    : `${pgCtl} -D "$2/data" -m immediate stop`;
  const reaper = spawn(
    'sh',
    [
      '-c',
      `while kill -0 "$1" 2>/dev/null; do sleep 1; done; ${stopCommand} >/dev/null 2>&1; rm -rf "$2"`,
      'reaper',
      String(process.pid),
      dir,
    ],
    { detached: true, stdio: 'ignore' },
  );
  reaper.unref();
  let stopped: Promise<void> | undefined;
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart: async () => {
      await ctl('-o', options, '-m', 'fast', 'restart');
    },
    stop: () => {
      stopped ??= ctl('-m', 'immediate', 'stop')
        .catch(() => undefined)
        .then(() => rm(dir, { recursive: true, force: true }))
        .then(() => {
          if (reaper.pid !== undefined) process.kill(reaper.pid, 'SIGKILL');
        })
        .catch(() => undefined);
      return stopped;
    },
  };
}

async function accountIds(name: string): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}

/** Runs a command to completion (60 s at most). @returns stdout. @throws Error with stderr on failure. */
export function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${command} ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

/** A TCP port free on 127.0.0.1 right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
