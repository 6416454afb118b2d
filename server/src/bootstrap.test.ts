import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@notary/platform/log';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../test/bench/lib';
import { startService } from './bootstrap';
import { DEVNET_ENDPOINTS_FILE } from './cli/devnet-info';
import { loadConfig } from './config';

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** This process's open handles by kind (sockets, servers, worker threads, …), timers left out. */
function handles(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) {
    if (kind === 'Timeout' || kind === 'Immediate') continue;
    counts[kind] = (counts[kind] ?? 0) + 1;
  }
  return counts;
}

/** Polls `check` until it holds; the deadline only bounds a failure. */
async function eventually(check: () => boolean | Promise<boolean>, deadlineMs = 30_000): Promise<boolean> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/**
 * The composition root's teardown convention (docs/architecture.md, Composition and teardown): each resource is
 * handed to the start's stack where it is made, so a start that fails halfway releases exactly what it made.
 */
describe('a start that fails halfway releases what it made', () => {
  it('failing at the operator socket, after the port, the database, the devnets, anchoring, the queue and the jobs: all are released and the same port and DATA_DIR start again', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-failed-start-'));
    dirs.push(dataDir);
    const port = await freePort();
    // A directory where the operator socket goes: the socket's start cannot clear it, and it is made last.
    await mkdir(path.join(dataDir, 'admin.sock', 'in-the-way'), { recursive: true });
    const lines: string[] = [];
    const log = createLogger({
      level: 'info',
      format: 'json',
      destination: { write: (line: string) => lines.push(line) },
    });
    const env = { NODE_ENV: 'test', DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'info' } as const;
    const before = handles();

    const failure = await startService(loadConfig({ ...env, ANCHORING: 'devnet' }), { log }).catch(
      (e: unknown) => e,
    );
    expect(String(failure)).toMatch(/admin\.sock/);

    // The devnets it started (their endpoints were printed) and the HTTP port no longer accept connections.
    const endpoints = lines.flatMap((line) => {
      const m = /(?:evm-rpc|stacks-api) (http:\/\/[^"\s]+)/.exec(line);
      return m?.[1] ? [Number(new URL(m[1]).port)] : [];
    });
    expect(endpoints).toHaveLength(2);
    for (const p of [port, ...endpoints]) expect(await accepts(p)).toBe(false);
    // The devnet record for `devnet:info` is gone with them.
    expect(existsSync(path.join(dataDir, DEVNET_ENDPOINTS_FILE))).toBe(false);
    // No socket, server or worker thread of the failed start is left open: no kind of handle outnumbers the
    // count before it.
    const left = () => Object.entries(handles()).filter(([kind, n]) => n > (before[kind] ?? 0));
    await eventually(() => left().length === 0);
    expect(left()).toEqual([]);

    // The port and the embedded database's directory lock were released: the same start succeeds now.
    await rm(path.join(dataDir, 'admin.sock'), { recursive: true });
    const service = await startService(loadConfig({ ...env, ANCHORING: 'off' }), { log });
    expect(await accepts(port)).toBe(true);
    await service.close();
    expect(await accepts(port)).toBe(false);
  }, 180_000);
});
