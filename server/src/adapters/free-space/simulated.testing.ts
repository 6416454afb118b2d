import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FreeSpace, Volume } from '../../ports/free-space';

/**
 * A disk of `capacityBytes` holding exactly the files under `dir` (its free space is the capacity less their
 * sizes, as written so far, temporary files included), for tests that fill a disk without filling this
 * machine's. Volumes other than `volume` have room without end. `readings` counts the questions asked.
 */
export function simulatedDisk(options: {
  dir: string;
  capacityBytes: number;
  volume?: Volume;
}): FreeSpace & { readings: number; capacityBytes: number } {
  const disk = {
    readings: 0,
    capacityBytes: options.capacityBytes,
    async freeBytes(volume: Volume): Promise<number> {
      disk.readings++;
      if (volume !== (options.volume ?? 'data')) return Number.POSITIVE_INFINITY;
      return disk.capacityBytes - (await usedBytes(options.dir));
    },
  };
  return disk;
}

/** Bytes of the regular files under `dir` (0 when it does not exist). */
export async function usedBytes(dir: string): Promise<number> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
  let total = 0;
  for (const e of entries) {
    if (!e.isFile()) continue;
    total += await stat(path.join(e.parentPath, e.name)).then(
      (s) => s.size,
      () => 0,
    );
  }
  return total;
}
