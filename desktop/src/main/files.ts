import { randomUUID } from 'node:crypto';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { errorMessage } from '@notary/shared';
import type { LocalFile } from '../common/bridge';
import { ClientError } from '../common/errors';

/** Most files remembered at once; the oldest are forgotten first. */
const MAX_FILES = 2000;

/**
 * Files the user picked in the system dialog or dropped on the window. The renderer only ever names them
 * by a random id; the paths stay here, so a compromised page cannot make main read anything else.
 */
export class FileRegistry {
  private readonly files = new Map<string, { path: string; name: string; size: number }>();

  /**
   * Registers an absolute path (already validated by the IPC schema) after checking it is a regular file.
   * Symbolic links are resolved: the id names the real file.
   * @throws ClientError `file` when it does not exist or is not a regular file.
   */
  async register(filePath: string): Promise<LocalFile> {
    let real: string;
    let size: number;
    try {
      real = await realpath(filePath);
      const st = await stat(real);
      if (!st.isFile()) throw new Error('not a regular file');
      size = st.size;
    } catch (e) {
      throw new ClientError({ kind: 'file', message: `Cannot use ${filePath}: ${errorMessage(e)}` });
    }
    const id = randomUUID();
    this.files.set(id, { path: real, name: path.basename(filePath), size });
    while (this.files.size > MAX_FILES) {
      const oldest = this.files.keys().next().value;
      if (oldest === undefined) break;
      this.files.delete(oldest);
    }
    return { id, name: path.basename(filePath), size };
  }

  /** @throws ClientError `not-found` for an id that was never handed out (or was forgotten). */
  get(id: string): { path: string; name: string; size: number } {
    const file = this.files.get(id);
    if (!file) throw new ClientError({ kind: 'not-found', message: 'Unknown file: pick it again' });
    return file;
  }
}
