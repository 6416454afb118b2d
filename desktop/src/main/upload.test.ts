import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { uploadFile } from './upload';

vi.mock('electron', () => import('./testing/electron-stand-in'));

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
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => {
        record.bodyBytes += chunk.length;
        if (url === '/ok') chunks.push(chunk);
        if (url === '/slow') {
          // Read slowly: the client's backpressure keeps it from running ahead.
          req.pause();
          setTimeout(() => req.resume(), 20);
        }
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
    // Progress: monotonic, in bytes of the file, ending at its size.
    expect(events.length).toBeGreaterThan(2);
    expect(events.at(-1)).toEqual([SIZE, SIZE]);
    for (let i = 1; i < events.length; i++)
      expect(events[i]?.[0]).toBeGreaterThanOrEqual(events[i - 1]?.[0] ?? 0);
  });

  it('cancels mid-upload: the request is cut and the server never sees it complete', async () => {
    const controller = new AbortController();
    let seen = 0;
    const run = uploadFile({
      url: `${base}/slow`,
      jwt: 'jwt-value',
      filePath: file,
      fileName: 'a.pdf',
      signal: controller.signal,
      onProgress: (loaded) => {
        seen = loaded;
        if (loaded > 2 * 1024 * 1024) controller.abort();
      },
    });
    await expect(run).rejects.toMatchObject({ kind: 'cancelled' });
    expect(seen).toBeLessThan(SIZE);
    await new Promise((r) => setTimeout(r, 100));
    const record = received.find((r) => r.path === '/slow');
    expect(record?.complete).toBe(false);
    expect(record?.bodyBytes).toBeLessThan(SIZE);
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
