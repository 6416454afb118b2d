import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireDirectoryLock, DirectoryLockedError } from './dir-lock';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'platform-lock-'));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The pid of a process that has exited (its pid is free again, at least for a while). */
async function deadPid(): Promise<number> {
  const child = spawn('true');
  const pid = child.pid ?? 0;
  await new Promise((resolve) => child.once('exit', resolve));
  return pid;
}

describe('acquireDirectoryLock', () => {
  it('creates the directory and a lock file holding our pid; release removes it, twice is harmless', async () => {
    const dir = path.join(root, 'nested', 'data');
    const lock = await acquireDirectoryLock(dir, { name: 'vectors.lock' });
    const file = path.join(dir, 'vectors.lock');
    expect(await readFile(file, 'utf8')).toBe(String(process.pid));
    await lock.release();
    await lock.release();
    expect(existsSync(file)).toBe(false);
  });

  it('refuses a lock held by another live process, with its pid and the caller’s message', async () => {
    const holder = spawn('sleep', ['30']);
    try {
      await writeFile(path.join(root, 'LOCK'), String(holder.pid));
      const error = await acquireDirectoryLock(root, {
        lockedMessage: ({ pid }) => `in use by ${pid}`,
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DirectoryLockedError);
      expect(error).toMatchObject({
        code: 'EDATADIRLOCKED',
        pid: holder.pid,
        message: `in use by ${holder.pid}`,
      });
      // The holder's lock file is left alone.
      expect(await readFile(path.join(root, 'LOCK'), 'utf8')).toBe(String(holder.pid));
    } finally {
      holder.kill();
    }
  });

  it('takes over a lock left by a dead process or holding garbage', async () => {
    await writeFile(path.join(root, 'LOCK'), String(await deadPid()));
    const first = await acquireDirectoryLock(root);
    expect(await readFile(path.join(root, 'LOCK'), 'utf8')).toBe(String(process.pid));
    await first.release();
    await writeFile(path.join(root, 'LOCK'), 'not a pid');
    const second = await acquireDirectoryLock(root);
    expect(await readFile(path.join(root, 'LOCK'), 'utf8')).toBe(String(process.pid));
    await second.release();
  });
});
