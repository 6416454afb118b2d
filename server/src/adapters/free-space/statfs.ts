import { statfs } from 'node:fs/promises';
import path from 'node:path';
import type { FreeSpace, Volume } from '../../ports/free-space';

/**
 * The `FreeSpace` of this machine: `statfs(2)` of each directory a volume names (`f_bavail * f_bsize`, what a
 * process without root's reserve may use), the smallest when there are several. A directory not created yet
 * (the file storage's root before the first upload) is asked through its nearest existing parent. A volume
 * with no directory is not watched (infinite room).
 */
export function statfsFreeSpace(volumes: Record<Volume, readonly string[]>): FreeSpace {
  return {
    async freeBytes(volume) {
      const dirs = volumes[volume];
      if (dirs.length === 0) return Number.POSITIVE_INFINITY;
      const free = await Promise.all(dirs.map(availableBytes));
      return Math.min(...free);
    },
  };
}

async function availableBytes(dir: string): Promise<number> {
  let at = path.resolve(dir);
  for (;;) {
    try {
      const s = await statfs(at);
      return s.bavail * s.bsize;
    } catch (e) {
      const parent = path.dirname(at);
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || parent === at) throw e;
      at = parent;
    }
  }
}
