import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, watch, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { silentLog } from '@notary/platform/log';
import { AppError } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CaptureAccount, IsolatedCapturer } from './isolated-capturer';

const STAND_IN = fileURLToPath(new URL('../child/capture-process.testing.ts', import.meta.url));
const root = process.getuid?.() === 0;
/** As the service would run them: as `nobody` when the tests run as root. */
const account: CaptureAccount | undefined = root
  ? {
      name: 'nobody',
      uid: Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' })),
      gid: Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' })),
    }
  : undefined;

function capturer(timeoutMs = 30_000) {
  return new IsolatedCapturer(
    { chromiumPath: '/nonexistent', timeoutMs, concurrency: 2, allowHosts: [], caCertsPem: undefined },
    { userAgentProduct: 'test', software: 'test', account, log: silentLog, entry: STAND_IN, graceMs: 0 },
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('IsolatedCapturer against a capture process that a page took over', () => {
  let secretDir: string;
  let secretFile: string;
  const secret = 'service-secret-that-must-not-leave';

  beforeAll(async () => {
    // A file of the service: readable by the service, not by the capture account.
    secretDir = await mkdtemp(path.join(os.tmpdir(), 'notary-service-'));
    secretFile = path.join(secretDir, 'secret');
    await writeFile(secretFile, secret, { mode: 0o600 });
    process.env.NOTARY_CANARY_SECRET = secret;
  });
  afterAll(async () => {
    delete process.env.NOTARY_CANARY_SECRET;
    await rm(secretDir, { recursive: true, force: true });
  });

  it('starts it with a minimal environment, as the capture account', async () => {
    const capture = await capturer().capture(new URL('http://stand-in/environment'));
    try {
      const seen = JSON.parse(capture.record.title) as { env: string[]; uid: number };
      expect(seen.env).toEqual(['HOME', 'LANG', 'PATH', 'TMPDIR', 'TZ']);
      if (account) expect(seen.uid).toBe(account.uid);
      const warc = Buffer.alloc(capture.warc.bytes);
      await capture.warc.file.read(warc, 0, warc.length, 0);
      expect(warc.toString()).toBe('warc');
      expect(capture.screenshot.toString()).toBe('png');
    } finally {
      await capture.dispose();
    }
  });

  it('refuses a part that is a link to a file of the service', async () => {
    const size = Buffer.byteLength(secret);
    const url = new URL(`http://stand-in/symlink?target=${encodeURIComponent(secretFile)}&size=${size}`);
    const failure = await capturer()
      .capture(url)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(failure).toBeInstanceOf(AppError);
    expect((failure as AppError).code).toBe('INTERNAL');
    expect((failure as AppError).message).not.toContain(secret);
    expect(await readFile(secretFile, 'utf8')).toBe(secret);
  });

  it('refuses an answer that is not one', async () => {
    await expect(capturer().capture(new URL('http://stand-in/garbage'))).rejects.toMatchObject({
      code: 'INTERNAL',
    });
  });

  it('stops reading an answer past its bound, and stops the process that wrote it', async () => {
    await expect(capturer().capture(new URL('http://stand-in/flood'))).rejects.toMatchObject({
      code: 'INTERNAL',
    });
  });

  it('ends a capture process that does not answer: at the deadline, and when the client goes away', async () => {
    // Deadline: 2 s (the smallest CAPTURE_TIMEOUT_MS) and no grace.
    await expect(capturer(2_000).capture(new URL('http://stand-in/hang'))).rejects.toMatchObject({
      code: 'GATEWAY_TIMEOUT',
    });

    // The stand-in writes its pid into a directory of the test's; the watcher is there before it starts.
    const pidDir = await mkdtemp(path.join(os.tmpdir(), 'notary-pid-'));
    await chmod(pidDir, 0o777);
    const pidFile = path.join(pidDir, 'pid');
    const watcher = watch(pidDir);
    const abort = new AbortController();
    const url = new URL(`http://stand-in/hang?pidFile=${encodeURIComponent(pidFile)}`);
    const pending = capturer().capture(url, { signal: abort.signal });
    let pid = 0;
    while (!pid) {
      pid = Number(await readFile(pidFile, 'utf8').catch(() => '0'));
      if (!pid) await watcher.next();
    }
    expect(alive(pid)).toBe(true);
    abort.abort(new Error('client went away'));
    await expect(pending).rejects.toThrow('client went away');
    expect(alive(pid)).toBe(false);
    await rm(pidDir, { recursive: true, force: true });
  });
});
