import { readdir } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../harness/http';
import { DATABASE_KINDS, startTestService, storedKeys, type TestService } from '../harness/service';

const MB = 1024 * 1024;
const BOUNDARY = 'notaryTestBoundary7MA4YWxk';

/**
 * Sends a multipart upload of `size` zero bytes by hand, so the test controls framing (chunked or with
 * Content-Length) and can hang up midway (`abortAfter` bytes). Resolves with the status, or `undefined`
 * when the request was abandoned.
 */
function rawUpload(
  url: string,
  token: string,
  size: number,
  options: { chunked: boolean; abortAfter?: number },
): Promise<{ status: number; body: string } | undefined> {
  const head = Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="consent"\r\n\r\ntrue\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const headers: http.OutgoingHttpHeaders = {
    authorization: `Bearer ${token}`,
    'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
  };
  if (!options.chunked) headers['content-length'] = head.length + size + tail.length;
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/api/documents/upload`, { method: 'POST', headers });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', (e) => (options.abortAfter !== undefined ? resolve(undefined) : reject(e)));
    const chunk = Buffer.alloc(MB);
    let sent = 0;
    const pump = () => {
      req.write(head);
      const writeMore = () => {
        while (sent < size) {
          if (options.abortAfter !== undefined && sent >= options.abortAfter) {
            req.destroy();
            setTimeout(() => resolve(undefined), 50);
            return;
          }
          const n = Math.min(MB, size - sent);
          sent += n;
          if (!req.write(n === MB ? chunk : chunk.subarray(0, n))) {
            req.once('drain', writeMore);
            return;
          }
        }
        req.end(tail);
      };
      writeMore();
    };
    pump();
  });
}

async function waitFor(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.each(DATABASE_KINDS)('upload limits on %s', (kind) => {
  let t: TestService;
  let token: string;
  const documents = async () =>
    (await api<{ documents: unknown[] }>(t.url, '/api/documents', { token })).body.documents;
  const tmpFiles = async () => readdir(path.join(t.dataDir, 'objects', '.tmp')).catch(() => [] as string[]);

  beforeAll(async () => {
    t = await startTestService(kind);
    token = await t.token('big@example.com');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a 251 MB upload streamed without Content-Length gets 413 and leaves storage and database unchanged', async () => {
    const res = await rawUpload(t.url, token, 251 * MB, { chunked: true });
    expect(res?.status).toBe(413);
    expect(JSON.parse(res?.body ?? '{}')).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(await storedKeys(t)).toEqual([]);
    expect(await tmpFiles()).toEqual([]);
    expect(await documents()).toEqual([]);
  });

  it('a 251 MB upload announced by Content-Length gets 413 before anything is stored', async () => {
    const res = await rawUpload(t.url, token, 251 * MB, { chunked: false });
    expect(res?.status).toBe(413);
    expect(await storedKeys(t)).toEqual([]);
    expect(await documents()).toEqual([]);
  });

  it('a client that disconnects mid-upload leaves nothing behind', async () => {
    const res = await rawUpload(t.url, token, 50 * MB, { chunked: true, abortAfter: 20 * MB });
    expect(res).toBeUndefined();
    await waitFor(async () => (await tmpFiles()).length === 0 && (await storedKeys(t)).length === 0);
    expect(await documents()).toEqual([]);
  });

  it('exactly 250 MB is accepted', async () => {
    const res = await rawUpload(t.url, token, 250 * MB, { chunked: true });
    expect(res?.status).toBe(201);
    expect(JSON.parse(res?.body ?? '{}')).toMatchObject({ fileSize: 250 * MB });
    expect(await storedKeys(t)).toHaveLength(1);
  });
});
