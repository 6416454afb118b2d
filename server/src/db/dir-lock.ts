import { rmSync } from 'node:fs';
import { open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';

export interface DirectoryLock {
  release(): Promise<void>;
}

export class DirectoryLockedError extends Error {
  readonly code = 'EDATADIRLOCKED';
  constructor(
    readonly dir: string,
    readonly pid: number,
  ) {
    super(`The embedded database in ${dir} is in use by process ${pid}`);
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

/**
 * Takes an exclusive lock on `dir` with a `LOCK` file holding our pid (created with O_EXCL).
 * A lock left by a dead process is taken over.
 * @throws DirectoryLockedError when a live process holds it.
 */
export async function acquireDirectoryLock(dir: string): Promise<DirectoryLock> {
  const file = path.join(dir, 'LOCK');
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
        throw new DirectoryLockedError(dir, pid);
      }
      await rm(file, { force: true });
    }
  }
  throw new Error(`Could not lock ${dir}`);
}
