import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ClientError } from '../common/errors';
import { hashFile } from './hash';

vi.mock('electron', () => import('./electron-stand-in.testing'));

const FIXTURES = path.resolve(import.meta.dirname, '../../../../shared/fixtures');

/** GNU coreutils' `sha256sum`: an independent reference. */
async function sha256sum(file: string): Promise<string> {
  const { stdout } = await promisify(execFile)('sha256sum', ['--binary', file]);
  return stdout.slice(0, 64);
}

describe('hashFile (main process, streaming SHA-256)', () => {
  let dir: string;
  let big: string;
  let empty: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'notary-hash-'));
    big = path.join(dir, 'big.bin');
    // 40 MiB of random bytes: many chunks, several progress events.
    await writeFile(big, randomBytes(40 * 1024 * 1024));
    empty = path.join(dir, 'empty.bin');
    await writeFile(empty, '');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it.each(['pdfs/tracemonkey.pdf', 'pdfs/empty_protected.pdf', 'files/contrato.txt', 'files/diagram.png'])(
    'equals sha256sum for the fixture %s',
    async (name) => {
      const file = path.join(FIXTURES, name);
      expect(await hashFile(file)).toBe(await sha256sum(file));
    },
  );

  it('equals sha256sum for a 40 MiB file and reports monotonic progress ending at the size', async () => {
    const events: [number, number][] = [];
    const hash = await hashFile(big, { onProgress: (loaded, total) => events.push([loaded, total]) });
    expect(hash).toBe(await sha256sum(big));
    expect(events.length).toBeGreaterThan(1);
    expect(events.at(-1)).toEqual([40 * 1024 * 1024, 40 * 1024 * 1024]);
    for (let i = 1; i < events.length; i++)
      expect(events[i]?.[0]).toBeGreaterThanOrEqual(events[i - 1]?.[0] ?? 0);
  });

  it('hashes an empty file (the well-known empty digest)', async () => {
    expect(await hashFile(empty)).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('stops when cancelled', async () => {
    const controller = new AbortController();
    const run = hashFile(big, { signal: controller.signal, onProgress: () => controller.abort() });
    await expect(run).rejects.toMatchObject({ kind: 'cancelled' });
  });

  it('reports an unreadable file as a file error', async () => {
    const error = await hashFile(path.join(dir, 'missing.bin')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ClientError);
    expect(error).toMatchObject({ kind: 'file' });
  });
});
