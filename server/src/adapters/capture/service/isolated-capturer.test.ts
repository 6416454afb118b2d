import { execFile, execFileSync } from 'node:child_process';
import { access, chmod, chown, mkdtemp, readdir, readFile, rm, watch, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { silentLog } from '@notary/platform/log';
import { AppError } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type CaptureAccount, IsolatedCapturer } from './isolated-capturer';
import { SANDBOX_ID } from './sandbox';

const STAND_IN = fileURLToPath(new URL('../child/capture-process.testing.ts', import.meta.url));
const PROBE = fileURLToPath(new URL('./sandbox-probe.testing.ts', import.meta.url));
const REPOSITORY = fileURLToPath(new URL('../../../../../', import.meta.url));
const execFileAsync = promisify(execFile);
const root = process.getuid?.() === 0;
/** As the service would run them: as `nobody` when the tests run as root. */
const account: CaptureAccount | undefined = root
  ? {
      name: 'nobody',
      uid: Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' })),
      gid: Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' })),
    }
  : undefined;

function capturer(timeoutMs = 30_000, spare = false, spareIdleMs?: number) {
  return new IsolatedCapturer(
    { chromiumPath: '/nonexistent', timeoutMs, concurrency: 2, allowHosts: [], caCertsPem: undefined },
    {
      userAgentProduct: 'test',
      software: 'test',
      account,
      log: silentLog,
      entry: STAND_IN,
      graceMs: 0,
      spare,
      ...(spareIdleMs === undefined ? {} : { spareIdleMs }),
    },
  );
}

/** The pids of this process's children that run the stand-in (`/proc/<pid>/stat`'s parent, its command line). */
async function standIns(): Promise<number[]> {
  const found: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    // The parent's pid is the second field after the command's closing parenthesis.
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (parent !== process.pid) continue;
    const command = await readFile(`/proc/${name}/cmdline`, 'utf8').catch(() => '');
    if (command.includes(STAND_IN)) found.push(Number(name));
  }
  return found;
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

  it('starts the next capture’s process ahead once a capture has run: as isolated, in a work directory of its own, ended by close', async () => {
    const spared = capturer(30_000, true);
    type Seen = { env: string[]; uid: number; pid: number; startedAt: number; workDir: string };
    const captureOnce = async (): Promise<Seen> => {
      const capture = await spared.capture(new URL('http://stand-in/environment'));
      try {
        return JSON.parse(capture.record.title) as Seen;
      } finally {
        await capture.dispose();
      }
    };
    try {
      const first = await captureOnce();
      await spared.ready();
      const requested = Date.now();
      const second = await captureOnce();
      // Started before it was asked for, another process in another directory, the same environment and account.
      expect(second.startedAt).toBeLessThanOrEqual(requested);
      expect(second.pid).not.toBe(first.pid);
      expect(second.workDir).not.toBe(first.workDir);
      expect(second.env).toEqual(['HOME', 'LANG', 'PATH', 'TMPDIR', 'TZ']);
      if (account) expect(second.uid).toBe(account.uid);
      // Used once: its work directory is gone with the capture.
      await expect(access(second.workDir)).rejects.toThrow();
      await spared.ready();
      expect(await standIns()).toHaveLength(1);
    } finally {
      await spared.close();
    }
    expect(await standIns()).toEqual([]);
    // Closed: a capture still runs (its process started for it), and none is started after it.
    await captureOnce();
    expect(await standIns()).toEqual([]);
  });

  it('ends the process started ahead once it has waited its idle time, and the next capture starts its own', async () => {
    const spared = capturer(30_000, true, 200);
    try {
      const first = await spared.capture(new URL('http://stand-in/environment'));
      await first.dispose();
      await spared.ready();
      // The process started ahead is gone after its idle time, with nothing else to end it.
      await vi.waitFor(async () => expect(await standIns()).toEqual([]), { timeout: 20_000 });
      const second = await spared.capture(new URL('http://stand-in/environment'));
      await second.dispose();
    } finally {
      await spared.close();
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

/**
 * A service that is not root has no account to start captures as: they run in a bubblewrap sandbox (Debian's
 * `bubblewrap`, which the CI installs). A capture process a page took over tries to read the service's
 * environment and its secret, both readable by the service's own user: it finds neither.
 */
describe('IsolatedCapturer in the user-namespace sandbox', () => {
  let dataDir: string;
  let secretFile: string;
  const secret = 'data-dir-secret-that-must-not-leave';

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-data-'));
    secretFile = path.join(dataDir, 'secret');
    await writeFile(secretFile, secret, { mode: 0o600 });
    process.env.NOTARY_CANARY_SECRET = secret;
  });
  afterAll(async () => {
    delete process.env.NOTARY_CANARY_SECRET;
    await rm(dataDir, { recursive: true, force: true });
  });

  const probe = (sandbox: boolean) =>
    new IsolatedCapturer(
      {
        chromiumPath: '/nonexistent',
        timeoutMs: 30_000,
        concurrency: 1,
        allowHosts: [],
        caCertsPem: undefined,
      },
      {
        userAgentProduct: 'test',
        software: 'test',
        account: undefined,
        ...(sandbox ? { sandbox: { bwrapPath: '/usr/bin/bwrap', hiddenPaths: [dataDir] } } : {}),
        log: silentLog,
        entry: STAND_IN,
        graceMs: 0,
      },
    ).capture(new URL(`http://stand-in/probe?pid=${process.pid}&file=${encodeURIComponent(secretFile)}`));

  it('the capture process sees neither the service’s environment nor DATA_DIR, and runs as another uid', async () => {
    const capture = await probe(true);
    try {
      const seen = JSON.parse(capture.record.title) as { environ: string; file: string; uid: number };
      expect(seen.environ).toBe('ENOENT');
      expect(seen.file).toBe('ENOENT');
      expect(seen.uid).toBe(SANDBOX_ID);
      // Its files are the service's outside the namespace, and read as usual.
      const warc = Buffer.alloc(capture.warc.bytes);
      await capture.warc.file.read(warc, 0, warc.length, 0);
      expect(warc.toString()).toBe('warc');
    } finally {
      await capture.dispose();
    }
  });

  it('a service started as an unprivileged user: its capture process reads neither; without the sandbox it reads both', async () => {
    // The service's side runs as `nobody` when the tests are root (as in CI), else as the tests' own user.
    const unprivileged = await mkdtemp(path.join(os.tmpdir(), 'notary-unprivileged-'));
    await writeFile(path.join(unprivileged, 'secret'), secret, { mode: 0o600 });
    if (account) await chown(path.join(unprivileged, 'secret'), account.uid, account.gid);
    await chmod(unprivileged, 0o755);
    const run = async (args: string[]) =>
      JSON.parse(await unprivilegedService(args, unprivileged, { NOTARY_CANARY_SECRET: secret })) as {
        environ: string;
        file: string;
        uid: number;
      };
    try {
      const sandboxed = await run(['sandbox', STAND_IN, unprivileged]);
      expect(sandboxed).toMatchObject({ environ: 'ENOENT', file: 'ENOENT', uid: SANDBOX_ID });
      const bare = await run(['none', STAND_IN, unprivileged]);
      expect(bare.environ).toContain(secret);
      expect(bare.file).toBe(secret);
    } finally {
      await rm(unprivileged, { recursive: true, force: true });
    }
  });
});

/**
 * Runs `sandbox-probe.testing.ts` with `args` as an unprivileged service would (as `nobody` when the tests are
 * root, else as their own user), `home` its HOME; resolves to what it printed.
 */
async function unprivilegedService(
  args: string[],
  home: string,
  env: Record<string, string> = {},
): Promise<string> {
  const node = [process.execPath, '--import', 'tsx', PROBE, ...args];
  const command = account ? ['runuser', '-u', account.name, '--', ...node] : node;
  const { stdout } = await execFileAsync(command[0] ?? '', command.slice(1), {
    env: { PATH: process.env.PATH, HOME: home, ...env },
    cwd: REPOSITORY,
  });
  return stdout;
}

describe('a real capture in the sandbox (Debian Chromium, the real capture process)', () => {
  it('archives a loopback page from a service that is not root, Chromium’s own sandbox nested inside', async () => {
    const page = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Sandboxed capture</title><h1>inside bubblewrap</h1>');
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    const home = await mkdtemp(path.join(os.tmpdir(), 'notary-unprivileged-'));
    await chmod(home, 0o777);
    try {
      const { port } = page.address() as AddressInfo;
      const seen = JSON.parse(await unprivilegedService(['chromium', `http://127.0.0.1:${port}/`], home)) as {
        title: string;
        warcBytes: number;
      };
      expect(seen.title).toBe('Sandboxed capture');
      expect(seen.warcBytes).toBeGreaterThan(1000);
    } finally {
      page.closeAllConnections();
      await new Promise<void>((resolve) => page.close(() => resolve()));
      await rm(home, { recursive: true, force: true });
    }
  });
});
