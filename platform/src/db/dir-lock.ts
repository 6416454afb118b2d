import { rmSync } from 'node:fs';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';

export interface DirectoryLock {
  /** Removes the lock file; idempotent. The lock is also removed when the process exits. */
  release(): Promise<void>;
}

/** Who holds a lock: the locked directory, its lock file and the holder's pid. */
export interface LockHolder {
  dir: string;
  file: string;
  pid: number;
}

export interface DirectoryLockOptions {
  /** Name of the lock file inside the directory (default `LOCK`). */
  name?: string;
  /** Message of the `DirectoryLockedError` (default: `<file> is held by process <pid>`). */
  lockedMessage?: (holder: LockHolder) => string;
}

/** Thrown when another live process holds the lock (`code` EDATADIRLOCKED). */
export class DirectoryLockedError extends Error {
  readonly code = 'EDATADIRLOCKED';
  readonly dir: string;
  readonly file: string;
  readonly pid: number;
  constructor(holder: LockHolder, message: string) {
    super(message);
    this.dir = holder.dir;
    this.file = holder.file;
    this.pid = holder.pid;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const defaultMessage = ({ file, pid }: LockHolder) => `${file} is held by process ${pid}`;

/**
 * Takes an exclusive lock on `dir` (created if missing) with a lock file holding our pid, created with O_EXCL;
 * a lock left by a dead process is taken over. It guards single-process stores (PGlite, an embedded vector
 * index): a second process on the same files would silently lose writes. The lock file is removed by
 * `release()` or, failing that, when the process exits.
 * @throws DirectoryLockedError when a live process holds it; `Error('Could not lock <file>')` when three
 *   attempts in a row lose a race for the file; file system errors other than EEXIST as they are.
 */
export async function acquireDirectoryLock(
  dir: string,
  options: DirectoryLockOptions = {},
): Promise<DirectoryLock> {
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, options.name ?? 'LOCK');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(file, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      let released = false;
      const releaseSync = () => {
        if (!released) rmSync(file, { force: true });
      };
      process.once('exit', releaseSync);
      return {
        release: async () => {
          if (released) return;
          released = true;
          process.off('exit', releaseSync);
          await rm(file, { force: true });
        },
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number.parseInt(await readFile(file, 'utf8').catch(() => ''), 10);
      if (Number.isInteger(pid) && pid > 0 && alive(pid) && pid !== process.pid) {
        const holder = { dir, file, pid };
        throw new DirectoryLockedError(holder, (options.lockedMessage ?? defaultMessage)(holder));
      }
      await rm(file, { force: true });
    }
  }
  throw new Error(`Could not lock ${file}`);
}
