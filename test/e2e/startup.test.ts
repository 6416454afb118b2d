import { chmod, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type Service, startService } from '@notary/server/bootstrap';
import { loadConfig } from '@notary/server/config';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../bench/lib';
import { startNpmStart } from '../harness/npm-start';
import { createTestDatabase } from '../harness/postgres';
import { startTestService } from '../harness/service';

/**
 * A TCP gate in front of PostgreSQL: it accepts connections but forwards nothing until `open()`, so the
 * service stays in its start (waiting for the database) for exactly as long as the test wants.
 */
async function databaseGate(target: URL): Promise<{ url: string; open(): void; close(): Promise<void> }> {
  let opened = false;
  const waiting: Array<() => void> = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.pause();
    const forward = () => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      sockets.add(upstream);
      client.pipe(upstream).pipe(client);
      client.resume();
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', end).on('close', end);
      upstream.on('error', end).on('close', end);
    };
    if (opened) forward();
    else waiting.push(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const gated = new URL(target.toString());
  gated.hostname = '127.0.0.1';
  gated.port = String((server.address() as net.AddressInfo).port);
  return {
    url: gated.toString(),
    open() {
      opened = true;
      for (const forward of waiting.splice(0)) forward();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The longest a probe of `/health` may wait here: long enough that a busy CI machine never trips it, short
 * enough to catch a start-up that stops answering (a blocked event loop, a listener that holds requests). How
 * fast the answers are (the 1 s a liveness probe allows) is measured by `npm run bench -- idle`, on a quiet
 * machine.
 */
const PROBE_BOUND_MS = 15_000;

/** What one probe of `/health` got: a status, or why it got none. */
type ProbeOutcome = { status: number } | { error: string };

/**
 * One `GET /health` on a new connection, as an orchestrator's liveness probe makes it, bounded by
 * `PROBE_BOUND_MS`. When the bound's timer fires, one turn of I/O runs before the probe is judged, so that an
 * answer which arrived while this process itself was descheduled (the machine is loaded on purpose) is read.
 */
function probeHealth(port: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (outcome: ProbeOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(outcome);
    };
    const req = http.get({ host: '127.0.0.1', port, path: '/health', agent: false }, (res) => {
      res.resume();
      done({ status: res.statusCode ?? 0 });
    });
    req.on('error', (e: NodeJS.ErrnoException) => done({ error: e.code ?? e.message }));
    const timer = setTimeout(
      () => setImmediate(() => done({ error: `no answer within ${PROBE_BOUND_MS} ms` })),
      PROBE_BOUND_MS,
    );
  });
}

describe('requests that arrive while the service starts', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('get 503 at once (/health `starting`, an upload 503 read as such), and /health is ok once ready', async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const gate = await databaseGate(new URL(database.url));
    cleanups.push(() => gate.close());
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-start-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    const config = loadConfig({
      NODE_ENV: 'test',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATA_DIR: dataDir,
      DATABASE_URL: gate.url,
      ANCHORING: 'off',
      LOG_LEVEL: 'warn',
    });
    let service: Service | undefined;
    const starting = startService(config).then((s) => {
      service = s;
      return s;
    });
    cleanups.push(async () => {
      await (await starting.catch(() => undefined))?.close();
    });
    const base = `http://127.0.0.1:${port}`;
    // The port accepts before the database answers (the gate holds it): wait for the listen, not for time.
    for (;;) {
      const ok = await fetch(`${base}/health`).then(
        () => true,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(503);
    expect(health.headers.get('retry-after')).toBe('2');
    expect(await health.json()).toEqual({ status: 'starting' });

    const body = new FormData();
    body.set('consent', 'true');
    body.set('file', new Blob([new Uint8Array(1024 * 1024)]), 'one-megabyte.bin');
    const upload = await fetch(`${base}/api/documents/upload`, { method: 'POST', body });
    expect(upload.status).toBe(503);
    expect(await upload.json()).toEqual({
      message: 'The service is starting: try again in a moment',
      code: 'SERVICE_UNAVAILABLE',
      retryAfterSeconds: 2,
    });
    expect(service).toBeUndefined();

    gate.open();
    await starting;
    const ready = await fetch(`${base}/health`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ok' });
  });

  it('/health answers at every moment of `npm start` (fresh DATA_DIR, devnets): 503 `starting`, then 200', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-live-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const port = await freePort();
    // The embedded defaults: PGlite created in DATA_DIR, its migrations, the Hardhat and Stacks devnets.
    const service = startNpmStart(dataDir, port);
    cleanups.push(() => service.stop());
    let ready = false;
    void service.waitForLine(/\[notary\] listening on/, 170_000).then(
      () => {
        ready = true;
      },
      () => undefined,
    );
    // Probes one after the other from the spawn until the service is ready and has answered a few more.
    const answered: ProbeOutcome[] = [];
    let okAfterReady = 0;
    while (okAfterReady < 5) {
      const outcome = await probeHealth(port);
      // Before the port listens the connection is refused: the process is still loading its code.
      if (answered.length > 0 || !('error' in outcome && outcome.error === 'ECONNREFUSED'))
        answered.push(outcome);
      if (ready && 'status' in outcome && outcome.status === 200) okAfterReady += 1;
      expect(service.process.exitCode, service.tail()).toBeNull();
      await sleep(50);
    }
    const seen = answered.map((o) => ('status' in o ? o.status : o.error));
    // Every probe from the first answer on was answered: 503 `starting`, then 200 once ready, nothing else.
    expect(seen.filter((s) => s !== 503 && s !== 200)).toEqual([]);
    expect(seen).toContain(503);
    expect(seen.indexOf(200)).toBeGreaterThan(seen.lastIndexOf(503));
  }, 180_000);

  it('DATA_DIR is made private (0700) even when it existed open, and the operator socket in it is 0600', async () => {
    const parent = await mkdtemp(path.join(os.tmpdir(), 'notary-perm-'));
    cleanups.push(() => rm(parent, { recursive: true, force: true }));
    const open = path.join(parent, 'open');
    await mkdir(open, { mode: 0o755 });
    await chmod(open, 0o755);
    const fresh = path.join(parent, 'new', 'data');
    for (const dataDir of [open, fresh]) {
      const t = await startTestService('pglite', { DATA_DIR: dataDir });
      cleanups.push(() => t.close());
      expect((await stat(dataDir)).mode & 0o777).toBe(0o700);
      expect((await stat(path.join(dataDir, 'admin.sock'))).mode & 0o777).toBe(0o600);
    }
  });
});
