import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Child, freePort, runCommand } from '../bench/lib';
import { NODE, ROOT, startCpuBurners, startNpmStart } from '../harness/npm-start';

/** An older Node whose fetch (undici 6) clients still use, where the machine has one. */
const SYSTEM_NODE_20 = '/usr/bin/node';
const CLIENT = path.join(ROOT, 'test', 'harness', 'pooled-client.mjs');
const MiB = 1024 * 1024;

/** One line of `pooled-client.mjs`. */
interface ClientReport {
  node: string;
  connections: number;
  results: Array<{ gap: number; path: string; status?: number; connection?: string | null; error?: string }>;
}

async function runClient(node: string, args: string[]): Promise<ClientReport> {
  const r = await runCommand(node, [CLIENT, ...args], { cwd: ROOT, timeoutMs: 90_000 });
  expect(r.code, `${node} ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout.trim()) as ClientReport;
}

/** curl with its connection cache: `urls` one after the other, `perMinute` of them a minute at most. */
async function curlPaced(
  urls: string[],
  perMinute: number,
): Promise<{ code: number | null; lines: string[] }> {
  const args = ['-sS', '-w', '%{http_code} %{num_connects}\n', '--rate', `${perMinute}/m`];
  for (const url of urls) args.push('-o', '/dev/null', url);
  const r = await runCommand('curl', args, { cwd: ROOT, timeoutMs: 90_000 });
  return { code: r.code, lines: r.stdout.trim().split('\n') };
}

/**
 * Kept-alive connections never lose a request (Node's fetch 24 and 20, curl): the service as `npm start` runs
 * it (its own process, embedded database, devnets, production timeouts), clients that wait 1 to 10 s between
 * requests on one pooled connection, while operator commands arrive through the admin socket and uploads are
 * stored, and two CPU-bound processes load the machine. Before, the server's 5 s idle timer closed such
 * connections under the clients (a reset when the two crossed, a new connection otherwise).
 */
describe('kept-alive connections across idle gaps, the service busy and the machine loaded', () => {
  let burners: Child[] = [];
  let service: Child;
  let base: string;
  let dataDir: string;
  let work: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-keepalive-'));
    work = await mkdtemp(path.join(os.tmpdir(), 'notary-keepalive-files-'));
    const port = await freePort();
    // Uploads back to back from one account are the load here, not what the limits are for.
    service = startNpmStart(dataDir, port, { RATE_LIMITS: 'off' });
    await service.waitForLine(/\[notary\] listening on/, 170_000);
    base = `http://127.0.0.1:${port}`;
    burners = startCpuBurners(2);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(burners.map((b) => b.stop(1000)));
    await service?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    if (work) await rm(work, { recursive: true, force: true });
  });

  /** The operator CLI as an operator runs it (its own process, through the server's admin socket). */
  const cli = (...args: string[]) =>
    runCommand(NODE, ['--import', 'tsx', 'server/src/cli/main.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, NODE_ENV: undefined, DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
      timeoutMs: 120_000,
    });

  it('never reset: each client keeps one connection through every gap while operator commands and uploads run', async () => {
    const email = `keepalive-${randomBytes(4).toString('hex')}@example.test`;
    expect((await cli('user:create', '--email', email)).code).toBe(0);
    const token = (await cli('token', '--email', email)).stdout.trim();

    // The service's work during the gaps, back to back until the clients are done.
    let clientsDone = false;
    const commands: (number | null)[] = [];
    const uploads: number[] = [];
    const operatorLoop = (async () => {
      while (!clientsDone) commands.push((await cli('org:list')).code);
    })();
    const uploadLoop = (async () => {
      while (!clientsDone) {
        const form = new FormData();
        form.set('consent', 'true');
        form.set('file', new Blob([randomBytes(2 * MiB)]), 'load.bin');
        const res = await fetch(`${base}/api/documents/upload`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
          body: form,
        });
        await res.arrayBuffer();
        uploads.push(res.status);
      }
    })();

    const gaps = '1,4.5,10';
    const nodes = [NODE, ...(existsSync(SYSTEM_NODE_20) ? [SYSTEM_NODE_20] : [])];
    const [reports, curls] = await Promise.all([
      Promise.all(nodes.map((node) => runClient(node, ['gaps', base, gaps]))),
      (async () => {
        const health = `${base}/health`;
        const verify = `${base}/api/public/verify?hash=${'cd'.repeat(32)}`;
        return [
          await curlPaced([health, verify, health], 60),
          await curlPaced([health, verify], 12),
          await curlPaced([verify, health], 6),
        ];
      })(),
    ]).finally(() => {
      clientsDone = true;
    });
    await Promise.all([operatorLoop, uploadLoop]);

    expect(reports.map((r) => r.node.split('.')[0])).toEqual(nodes.length === 2 ? ['v24', 'v20'] : ['v24']);
    for (const report of reports) {
      // Every request answered, and all on the one connection the pool kept across the gaps.
      expect(report.results.map((r) => r.status ?? r.error)).toEqual([200, 200, 200, 200]);
      expect(report.connections).toBe(1);
    }
    for (const run of curls) {
      expect(run.code).toBe(0);
      expect(run.lines.map((l) => l.split(' ')[0])).toEqual(run.lines.map(() => '200'));
      // One connect per run: each later transfer reused the kept-alive connection.
      expect(run.lines.map((l) => Number(l.split(' ')[1])).reduce((a, b) => a + b, 0)).toBe(1);
    }
    // The service did work while the clients waited.
    expect(commands.length).toBeGreaterThan(0);
    expect(commands.every((c) => c === 0)).toBe(true);
    expect(uploads.length).toBeGreaterThan(0);
    expect(uploads.every((s) => s === 201)).toBe(true);
  }, 120_000);

  it('an upload answered before its body is read closes its connection: the client sees the 401, not a reset', async () => {
    const nodes = [NODE, ...(existsSync(SYSTEM_NODE_20) ? [SYSTEM_NODE_20] : [])];
    for (const node of nodes) {
      const report = await runClient(node, ['early', base, '32']);
      expect(report.results.map((r) => r.status ?? r.error)).toEqual([200, 401, 200]);
      expect(report.results[1]?.connection).toBe('close');
    }
    const file = path.join(work, 'early.bin');
    await writeFile(file, Buffer.alloc(32 * MiB, 1));
    const curl = await runCommand(
      'curl',
      [
        '-sS',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code} %header{connection}',
        '-H',
        'authorization: Bearer not-a-token',
        '-F',
        'consent=true',
        '-F',
        `file=@${file}`,
        `${base}/api/documents/upload`,
      ],
      { cwd: ROOT, timeoutMs: 60_000 },
    );
    expect(curl.code, curl.stderr).toBe(0);
    expect(curl.stdout).toBe('401 close');
  }, 120_000);

  it('an early-answered upload that keeps sending is cut off after a bounded part of its body', async () => {
    const url = new URL(base);
    const socket = net.connect(Number(url.port), url.hostname);
    await once(socket, 'connect');
    const declared = 100 * MiB;
    // A client that never stops to read: it writes its whole body whatever the server says.
    socket.write(
      'POST /api/documents/upload HTTP/1.1\r\nHost: notary.test\r\nAuthorization: Bearer not-a-token\r\n' +
        `Content-Type: multipart/form-data; boundary=x\r\nContent-Length: ${declared}\r\n\r\n`,
    );
    let answer = '';
    socket.on('data', (d: Buffer) => {
      answer += d.toString('latin1');
    });
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let sent = 0;
    while (!socket.destroyed && sent < declared) {
      sent += chunk.length;
      if (!socket.write(chunk)) await Promise.race([once(socket, 'drain').catch(() => undefined), closed]);
    }
    await closed;
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer).toMatch(/\r\nconnection: close\r\n/i);
    // 8 MiB read by the server, the rest of what was written sat in the two sockets' buffers (15 MiB in all
    // when measured on loopback), far from the 100 MiB announced.
    expect(sent).toBeLessThan(40 * MiB);
  }, 60_000);
});
