import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { uploadFile } from './upload';

vi.mock('electron', () => import('./electron-stand-in.testing'));

/** A promise with its resolver, for the test server's signals. */
function signal<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve: (value: T) => void = () => undefined;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** A clock that moves 50 ms (the progress interval) at each reading: every file chunk is reported. */
function steppingClock(): () => number {
  let t = 0;
  return () => {
    t += 50;
    return t;
  };
}

interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  bodyBytes: number;
  complete: boolean;
  parts: { name: string; fileName: string | null; sha256: string; size: number; text: string | null }[];
}

/** Splits a multipart/form-data body (RFC 7578) into its parts: an independent reading of what we sent. */
function parseMultipart(body: Buffer, contentType: string): Received['parts'] {
  const boundary = /boundary=(.+)$/.exec(contentType)?.[1];
  if (!boundary) throw new Error('no boundary');
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: Received['parts'] = [];
  let start = body.indexOf(delimiter);
  while (start >= 0) {
    const next = body.indexOf(delimiter, start + delimiter.length);
    if (next < 0) break;
    const part = body.subarray(start + delimiter.length + 2, next - 2); // skip CRLF after the delimiter and before the next
    const headerEnd = part.indexOf('\r\n\r\n');
    const head = part.subarray(0, headerEnd).toString('utf8');
    const content = part.subarray(headerEnd + 4);
    const name = /name="([^"]*)"/.exec(head)?.[1] ?? '';
    const fileName = /filename="([^"]*)"/.exec(head)?.[1] ?? null;
    parts.push({
      name,
      fileName,
      sha256: createHash('sha256').update(content).digest('hex'),
      size: content.length,
      text: fileName === null ? content.toString('utf8') : null,
    });
    start = next;
  }
  return parts;
}

describe('uploadFile (main process, streaming multipart over node:http)', () => {
  let dir: string;
  let server: Server;
  let base: string;
  const received: Received[] = [];
  /** Signals of the `/hold` route: its first body chunk arrived (then it reads no more); its connection closed. */
  let hold = { firstChunk: signal<Received>(), closed: signal<void>() };
  let file: string;
  let fileHash: string;
  const SIZE = 12 * 1024 * 1024;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'notary-upload-'));
    file = path.join(dir, 'contrato "final" ção.pdf');
    const bytes = randomBytes(SIZE);
    fileHash = createHash('sha256').update(bytes).digest('hex');
    await writeFile(file, bytes);
    server = createServer((req, res) => {
      const url = req.url ?? '/';
      const record: Received = { path: url, headers: req.headers, bodyBytes: 0, complete: false, parts: [] };
      received.push(record);
      if (url === '/early-413' || url === '/early-401') {
        const status = url === '/early-413' ? 413 : 401;
        const code = status === 413 ? 'PAYLOAD_TOO_LARGE' : 'UNAUTHENTICATED';
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: `refused with ${status}`, code }));
        req.resume();
        return;
      }
      if (url === '/hold') {
        // Mid-upload by construction: the first chunk is read, the rest held (never read, never answered)
        // until the client cuts the connection.
        const signals = hold;
        req.socket.once('close', () => signals.closed.resolve());
        req.once('data', (chunk: Buffer) => {
          req.pause();
          record.bodyBytes += chunk.length;
          signals.firstChunk.resolve(record);
        });
        req.on('end', () => {
          record.complete = true;
        });
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => {
        record.bodyBytes += chunk.length;
        if (url === '/ok') chunks.push(chunk);
      });
      req.on('end', () => {
        record.complete = true;
        if (url === '/ok') {
          record.parts = parseMultipart(Buffer.concat(chunks), req.headers['content-type'] ?? '');
        }
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true, bytes: record.bodyBytes }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('sends consent first, then the file: the bytes arrive intact, with an exact Content-Length', async () => {
    const events: [number, number][] = [];
    const answer = await uploadFile({
      url: `${base}/ok`,
      jwt: 'jwt-value',
      filePath: file,
      fileName: path.basename(file),
      onProgress: (loaded, total) => events.push([loaded, total]),
      now: steppingClock(),
    });
    const record = received.find((r) => r.path === '/ok');
    expect(record?.complete).toBe(true);
    expect(answer).toEqual({ ok: true, bytes: record?.bodyBytes });
    expect(Number(record?.headers['content-length'])).toBe(record?.bodyBytes);
    expect(record?.headers.authorization).toBe('Bearer jwt-value');
    expect(record?.parts.map((p) => p.name)).toEqual(['consent', 'file']);
    expect(record?.parts[0]?.text).toBe('true');
    expect(record?.parts[1]).toMatchObject({
      fileName: 'contrato %22final%22 ção.pdf',
      size: SIZE,
      sha256: fileHash,
    });
    // Progress: one event per 1 MiB chunk read (the clock says 50 ms passed each time), monotonic, in bytes
    // of the file, ending at its size.
    expect(events.length).toBeGreaterThan(SIZE / (1 << 20));
    expect(events.at(-1)).toEqual([SIZE, SIZE]);
    for (let i = 1; i < events.length; i++)
      expect(events[i]?.[0]).toBeGreaterThanOrEqual(events[i - 1]?.[0] ?? 0);
  });

  it('cancels mid-upload: the request is cut and the server never sees it complete', async () => {
    // Event-driven: cancel once the server holds the request after its first body chunk. (Cancelling from a
    // progress report past 2 MiB raced: loopback socket buffers take megabytes, so on a loaded machine the
    // whole file could be read before the 50 ms progress throttle let a report through.)
    hold = { firstChunk: signal<Received>(), closed: signal<void>() };
    const controller = new AbortController();
    const reportedAfterCancel: number[] = [];
    const run = uploadFile({
      url: `${base}/hold`,
      jwt: 'jwt-value',
      filePath: file,
      fileName: 'a.pdf',
      signal: controller.signal,
      now: steppingClock(),
      onProgress: (loaded) => {
        if (controller.signal.aborted) reportedAfterCancel.push(loaded);
      },
    });
    const record = await hold.firstChunk.promise;
    controller.abort();
    await expect(run).rejects.toMatchObject({ kind: 'cancelled' });
    // The client closed the connection (the server would hold it forever otherwise: the test would time out).
    await hold.closed.promise;
    expect(record.complete).toBe(false);
    expect(record.bodyBytes).toBeLessThan(SIZE);
    // Reading the file stopped with the cancel: no progress after it.
    expect(reportedAfterCancel).toEqual([]);
  });

  it.each([
    ['/early-413', 'too-large', 413],
    ['/early-401', 'session-expired', 401],
  ])(
    'reports an early answer (%s) as the error it is, without sending the rest',
    async (route, kind, status) => {
      const run = uploadFile({ url: `${base}${route}`, jwt: 'x', filePath: file, fileName: 'a.pdf' });
      await expect(run).rejects.toMatchObject({ kind, status, message: `refused with ${status}` });
    },
  );

  it('refuses a file over 250 MB before connecting', async () => {
    const big = path.join(dir, 'big.bin');
    await writeFile(big, '');
    await truncate(big, 250 * 1024 * 1024 + 1); // sparse: no disk used
    const before = received.length;
    const run = uploadFile({ url: `${base}/ok`, jwt: 'x', filePath: big, fileName: 'big.bin' });
    await expect(run).rejects.toMatchObject({ kind: 'too-large' });
    expect(received.length).toBe(before);
  });

  it('says the server cannot be reached when nothing listens', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const run = uploadFile({
      url: `http://127.0.0.1:${port}/ok`,
      jwt: 'x',
      filePath: file,
      fileName: 'a.pdf',
    });
    await expect(run).rejects.toMatchObject({ kind: 'offline' });
  });
});
