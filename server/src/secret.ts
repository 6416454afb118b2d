import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The service secret: `SECRET` when set, else one generated on first start and kept in `DATA_DIR/secret`
 * (mode 0600), so that signed URLs and sessions survive restarts on the embedded defaults.
 * Production with several instances must set `SECRET` (the same on every instance).
 */
export async function resolveSecret(configured: string | undefined, dataDir: string): Promise<string> {
  if (configured) {
    if (configured.length < 32) throw new Error('SECRET must be at least 32 characters long');
    return configured;
  }
  const file = path.join(dataDir, 'secret');
  const existing = await readFile(file, 'utf8').catch(() => undefined);
  if (existing && existing.trim().length >= 32) return existing.trim();
  await mkdir(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  await writeFile(file, `${secret}\n`, { mode: 0o600, flag: 'wx' }).catch(
    async (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
    },
  );
  return (await readFile(file, 'utf8')).trim();
}
