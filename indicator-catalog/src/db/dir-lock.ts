import { rmSync } from 'node:fs';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import path from 'node:path';

export interface DirectoryLock {
  release(): Promise<void>;
}

/** Thrown when another live process holds the lock (`code` EDATADIRLOCKED). */
export class DirectoryLockedError extends Error {
  readonly code = 'EDATADIRLOCKED';
  constructor(
    readonly file: string,
    readonly pid: number,
  ) {
    super(`${file} is held by process ${pid}: one catalog process per data directory`);
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
 * Takes an exclusive lock file `name` in `dir` holding our pid (created with O_EXCL); a lock left by a dead
 * process is taken over. PGlite and the embedded vector index are single-process stores: a second process
 * on the same files would silently lose writes (DEPENDENCIES.md, Data layer).
 * @throws DirectoryLockedError when a live process holds it.
 */
export async function acquireDirectoryLock(dir: string, name = 'LOCK'): Promise<DirectoryLock> {
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, name);
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
        throw new DirectoryLockedError(file, pid);
      }
      await rm(file, { force: true });
    }
  }
  throw new Error(`Could not lock ${file}`);
}
