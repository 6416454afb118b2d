import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { RATE_LIMITS } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../harness/http';
import { startTestService, type TestService } from '../harness/service';
import { freshEmail } from '../harness/tenants';

/** One raw client connection: what the server sent, and how the connection ended. */
interface Raw {
  socket: net.Socket;
  received: () => string;
  /** Resolves when the connection is closed, with everything the server sent on it. */
  closed: Promise<string>;
}

/** A TCP connection to the service from `localAddress` (any of 127.0.0.0/8 on Linux's loopback). */
async function connect(port: number, localAddress = '127.0.0.1'): Promise<Raw> {
  const socket = net.connect({ host: '127.0.0.1', port, localAddress });
  let text = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    text += chunk;
  });
  // A write after the server closed (EPIPE, ECONNRESET) is how such a connection ends, not a failure.
  socket.on('error', () => {});
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(text)));
  await once(socket, 'connect');
  return { socket, received: () => text, closed };
}

/** Waits, event by event, until the server has sent a whole answer (head and `Content-Length` body). */
function answerOn(raw: Raw): Promise<{ status: number; head: string; body: string }> {
  const parse = () => {
    const text = raw.received();
    const end = text.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const head = text.slice(0, end);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    if (text.length < end + 4 + length) return undefined;
    return { status: Number(head.split(' ')[1]), head, body: text.slice(end + 4, end + 4 + length) };
  };
  return new Promise((resolve, reject) => {
    const check = () => {
      const answer = parse();
      if (!answer) return;
      raw.socket.off('data', check);
      resolve(answer);
    };
    raw.socket.on('data', check);
    // Also when the connection had closed already: `closed` is settled once, whenever it happened.
    void raw.closed.then(() => {
      check();
      reject(new Error(`connection closed before a whole answer: ${JSON.stringify(raw.received())}`));
    });
    check();
  });
}

/** `GET /health` on a raw connection: its status, or `closed` when the server closed it unanswered. */
async function health(port: number, localAddress?: string): Promise<{ raw: Raw; status: number | 'closed' }> {
  const raw = await connect(port, localAddress);
  raw.socket.write('GET /health HTTP/1.1\r\nHost: notary\r\n\r\n');
  try {
    return { raw, status: (await answerOn(raw)).status };
  } catch {
    return { raw, status: 'closed' };
  }
}

/**
 * A 12 KiB upload whose multipart body is sent in `pieces` parts `gapMs` apart: slowly but steadily, for longer
 * than the short body deadline of the other routes.
 */
async function slowUpload(base: string, token: string, pieces: number, gapMs: number): Promise<number> {
  const boundary = `b${randomBytes(8).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="consent"\r\n\r\ntrue\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.bin"\r\n` +
        'Content-Type: application/octet-stream\r\n\r\n',
    ),
    randomBytes(12 * 1024),
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const req = http.request(`${base}/api/documents/upload`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(body.length),
    },
  });
  const answered = once(req, 'response') as Promise<[http.IncomingMessage]>;
  const size = Math.ceil(body.length / pieces);
  for (let i = 0; i < pieces; i++) {
    req.write(body.subarray(i * size, (i + 1) * size));
    if (i < pieces - 1) await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
  req.end();
  const [res] = await answered;
  res.resume();
  await once(res, 'end');
  return res.statusCode ?? 0;
}

const portOf = (t: TestService) => (t.service.server.address() as AddressInfo).port;

/**
 * Slow bodies cannot hold the service: every route but the upload gives a body `HTTP_BODY_TIMEOUT_SECONDS` to
 * arrive (1 s here), the upload keeps the long request timeout. The clients come through loopback, the
 * default `TRUST_PROXY`, as through a proxy on the same host: the per-address connection cap (4 here) does not
 * count the proxy, so all 20 slow clients are accepted and answered.
 */
describe('body deadlines: a trickling body is cut off, a slow upload is not', () => {
  let t: TestService;

  beforeAll(async () => {
    t = await startTestService('pglite', {
      RATE_LIMITS: 'on',
      HTTP_BODY_TIMEOUT_SECONDS: '1',
      HTTP_MAX_CONNECTIONS_PER_IP: '4',
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('20 connections sending a /trpc body a byte a second get 408 and are closed; a slow upload succeeds', async () => {
    const token = await t.token(freshEmail('slow'));
    const port = portOf(t);
    const dribblers = await Promise.all(Array.from({ length: 20 }, () => connect(port)));
    const timers = dribblers.map((d) => {
      d.socket.write(
        'POST /trpc/org.updateProfile HTTP/1.1\r\nHost: notary\r\nContent-Type: application/json\r\n' +
          'Content-Length: 1000\r\n\r\n{',
      );
      return setInterval(() => {
        if (d.socket.writable) d.socket.write(' ');
      }, 1000);
    });
    try {
      // Three times the others' body deadline, in steady pieces: the upload's own deadline is the long one.
      const upload = slowUpload(t.url, token, 12, 250);
      const ends = await Promise.all(dribblers.map((d) => d.closed));
      for (const end of ends) {
        expect(end).toMatch(/^HTTP\/1\.1 408 /);
        expect(end).toMatch(/\r\nconnection: close\r\n/i);
      }
      expect(await upload).toBe(201);
    } finally {
      for (const timer of timers) clearInterval(timer);
    }
  });
});

/**
 * The global limit counted before the body, and the per-address cap, for clients that reach the service
 * directly (`TRUST_PROXY=false`: loopback is a client like any other). The body deadline is the default here
 * (30 s): an answer that arrives is the limit's, never the deadline's, however loaded the machine.
 */
describe('direct clients: the global limit before the body, and a connection cap per address', () => {
  let t: TestService;

  beforeAll(async () => {
    t = await startTestService('pglite', {
      RATE_LIMITS: 'on',
      TRUST_PROXY: 'false',
      HTTP_MAX_CONNECTIONS_PER_IP: '8',
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('connections past the cap from one address are closed at once; other addresses still work', async () => {
    const port = portOf(t);
    const connections = () =>
      new Promise<number>((resolve, reject) =>
        t.service.server.getConnections((e, n) => (e ? reject(e) : resolve(n))),
      );
    // First in this service: no other connection is counted against 127.0.0.1.
    expect(await connections()).toBe(0);
    const held: Raw[] = [];
    for (let i = 0; i < 8; i++) {
      const { raw, status } = await health(port);
      expect(status).toBe(200);
      held.push(raw);
    }
    const ninth = await health(port);
    expect(ninth.status).toBe('closed');
    expect(await ninth.raw.closed).toBe('');
    // Another client address is not affected.
    const other = await health(port, '127.0.0.2');
    expect(other.status).toBe(200);
    other.raw.socket.destroy();
    // A connection given up makes room for one more.
    held.pop()?.socket.destroy();
    await expect
      .poll(async () => {
        const { raw, status } = await health(port);
        raw.socket.destroy();
        return status;
      })
      .toBe(200);
    for (const raw of held) raw.socket.destroy();
    // Gone on the server's side too, before the next test connects from the same address.
    await expect.poll(connections).toBe(0);
  });

  it('a request with a body spends one of the global budget on arrival, no more than before', async () => {
    const token = await t.token(freshEmail('spend'));
    const remaining = (h: Headers) => Number(/"global";r=(\d+);/.exec(h.get('ratelimit') ?? '')?.[1]);
    const first = await api(t.url, '/api/documents', { token });
    expect(remaining(first.headers)).toBe(RATE_LIMITS.global - 1);
    // REST with a body: counted on arrival, its call counts no second time.
    const patch = await api(t.url, '/api/org/profile', { token, method: 'PATCH', body: {} });
    expect(patch.headers.get('ratelimit-policy')).toBe('"global";q=120;w=60');
    expect(remaining(patch.headers)).toBe(RATE_LIMITS.global - 2);
    // A /trpc batch of two calls with a body: two, as each call of a batch counts.
    const batch = await fetch(`${t.url}/trpc/org.updateProfile,org.updateProfile?batch=1`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ 0: {}, 1: {} }),
    });
    await batch.arrayBuffer();
    const last = await api(t.url, '/api/documents', { token });
    expect(remaining(last.headers)).toBe(RATE_LIMITS.global - 5);
  });

  it('a client over its global budget gets 429 for a /trpc POST and a REST write before sending its body', async () => {
    const token = await t.token(freshEmail('spent'));
    const { userId } = await t.service.deps.tokens.verify(token);
    for (let i = 0; i < RATE_LIMITS.global; i++) {
      await t.service.deps.rateLimiter.consume(['global'], { userId, ip: null });
    }
    const port = portOf(t);
    const trpc = await connect(port);
    trpc.socket.write(
      'POST /trpc/org.updateProfile?batch=1 HTTP/1.1\r\nHost: notary\r\nContent-Type: application/json\r\n' +
        `Authorization: Bearer ${token}\r\nContent-Length: 100000\r\n\r\n{"0":`,
    );
    const refused = await answerOn(trpc);
    expect(refused.status).toBe(429);
    expect(refused.head).toMatch(/\r\nconnection: close\r\n/i);
    expect(refused.head).toMatch(/\r\nretry-after: \d+\r\n/i);
    // tRPC's shape for a request refused whole: a tRPC client reads it as each call's error.
    expect(JSON.parse(refused.body)).toMatchObject({
      error: { code: -32029, data: { code: 'RATE_LIMITED', httpStatus: 429 } },
    });
    trpc.socket.destroy();

    const rest = await connect(port);
    rest.socket.write(
      'PATCH /api/org/profile HTTP/1.1\r\nHost: notary\r\nContent-Type: application/json\r\n' +
        `Authorization: Bearer ${token}\r\nContent-Length: 100000\r\n\r\n{`,
    );
    const restRefused = await answerOn(rest);
    expect(restRefused.status).toBe(429);
    expect(JSON.parse(restRefused.body)).toMatchObject({ code: 'RATE_LIMITED' });
    rest.socket.destroy();
  });
});
