import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError } from '@notary/shared';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ZodError } from 'zod';
import { createLogger } from '../log';
import { httpErrors } from './errors';
import { loggableUrl, REQUEST_ID_HEADER, requestLogging } from './request-log';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Every line the app's logger wrote, as written (JSON) and parsed. */
const raw: string[] = [];
const lines = (): Record<string, unknown>[] => raw.map((l) => JSON.parse(l) as Record<string, unknown>);

/** Resolves once a line matching `test` was written (the completion line follows the answer). */
function lineWhere(test: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    const look = () => {
      const found = lines().find(test);
      if (found) resolve(found);
      else setImmediate(look);
    };
    look();
  });
}

let server: http.Server;
let base: string;

beforeAll(async () => {
  const log = createLogger({
    level: 'info',
    format: 'json',
    destination: { write: (line: string) => void raw.push(line) },
  });
  const { sendError, errorHandler } = httpErrors({
    fromZod: (e: ZodError) => new AppError('BAD_REQUEST', e.message),
  });
  const app = express();
  app.use(requestLogging(log));
  app.get('/hello', (req, res) => {
    req.log.info({ probe: 'hello' }, 'inside the request');
    res.setHeader('Set-Cookie', 'session=set-cookie-secret; HttpOnly');
    res.json({ ok: true });
  });
  app.get('/missing', (_req, res) => sendError(res, new AppError('NOT_FOUND', 'Nothing here')));
  app.get('/boom', (_req, res) => sendError(res, new Error('database detail')));
  app.use(errorHandler);
  server = http.createServer(app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('requestLogging: the request id', () => {
  it('keeps a safe client-sent X-Request-Id, echoes it and puts it on every line of the request', async () => {
    const id = 'client.Req_42-a';
    const res = await fetch(`${base}/hello`, { headers: { [REQUEST_ID_HEADER]: id } });
    expect(res.status).toBe(200);
    expect(res.headers.get(REQUEST_ID_HEADER)).toBe(id);
    const inside = await lineWhere((l) => l.probe === 'hello' && l.reqId === id);
    expect(inside).toMatchObject({ msg: 'inside the request', module: 'http', level: 30 });
    const done = await lineWhere((l) => l.msg === 'GET /hello 200' && l.reqId === id);
    expect(done).toMatchObject({ req: { method: 'GET', url: '/hello' }, res: { statusCode: 200 } });
  });

  it.each([
    ['spaces', 'not a safe id'],
    ['a quote', 'a"b'],
    ['a line break', 'a\tb'],
    ['65 characters', 'x'.repeat(65)],
    ['nothing', ''],
  ])('refuses a client id with %s: a fresh UUID instead, echoed and logged', async (_what, sent) => {
    const res = await fetch(`${base}/hello`, { headers: { [REQUEST_ID_HEADER]: sent } });
    const id = res.headers.get(REQUEST_ID_HEADER) ?? '';
    expect(id).toMatch(UUID);
    expect(id).not.toBe(sent);
    await lineWhere((l) => l.probe === 'hello' && l.reqId === id);
    await lineWhere((l) => l.msg === 'GET /hello 200' && l.reqId === id);
  });

  it('gives a request without one a UUID of its own, each request another', async () => {
    const a = (await fetch(`${base}/hello`)).headers.get(REQUEST_ID_HEADER);
    const b = (await fetch(`${base}/hello`)).headers.get(REQUEST_ID_HEADER);
    expect(a).toMatch(UUID);
    expect(b).toMatch(UUID);
    expect(a).not.toBe(b);
  });

  it('is in the header of error answers, whose body stays {message, code}', async () => {
    const res = await fetch(`${base}/missing`, { headers: { [REQUEST_ID_HEADER]: 'err-1' } });
    expect(res.status).toBe(404);
    expect(res.headers.get(REQUEST_ID_HEADER)).toBe('err-1');
    expect(await res.json()).toEqual({ message: 'Nothing here', code: 'NOT_FOUND' });
    await lineWhere((l) => l.msg === 'GET /missing 404' && l.reqId === 'err-1' && l.level === 30);
  });

  it('is on the line of an internal error, which keeps the cause out of the answer', async () => {
    const res = await fetch(`${base}/boom`, { headers: { [REQUEST_ID_HEADER]: 'err-2' } });
    expect(res.status).toBe(500);
    expect(res.headers.get(REQUEST_ID_HEADER)).toBe('err-2');
    expect(await res.json()).toEqual({ message: 'Internal error', code: 'INTERNAL' });
    const logged = await lineWhere((l) => l.msg === 'internal error' && l.reqId === 'err-2');
    expect(logged).toMatchObject({ level: 50, err: { message: 'database detail' } });
    const done = await lineWhere((l) => l.msg === 'GET /boom 500' && l.reqId === 'err-2' && l.level === 50);
    // No made-up "failed with status code 500" error: the cause is on the line above.
    expect(done.err).toBeUndefined();
  });
});

describe('requestLogging: redaction', () => {
  it('never writes the Authorization header, cookies or a Set-Cookie to a line', async () => {
    const res = await fetch(`${base}/hello`, {
      headers: {
        [REQUEST_ID_HEADER]: 'redact-1',
        authorization: 'Bearer session-token-secret',
        cookie: 'sid=cookie-secret',
      },
    });
    expect(res.status).toBe(200);
    const done = await lineWhere((l) => l.msg === 'GET /hello 200' && l.reqId === 'redact-1');
    expect(done).toMatchObject({
      req: { headers: { authorization: '[Redacted]', cookie: '[Redacted]' } },
      res: { headers: { 'set-cookie': '[Redacted]' } },
    });
    const all = raw.join('\n');
    for (const secret of ['session-token-secret', 'cookie-secret', 'set-cookie-secret']) {
      expect(all).not.toContain(secret);
    }
  });

  it('never writes a query string or a share token: signed URLs and feed tokens stay out of the logs', async () => {
    const res = await fetch(`${base}/share/share-token-secret?sig=signature-secret&token=feed-secret`, {
      headers: { [REQUEST_ID_HEADER]: 'redact-2' },
    });
    expect(res.status).toBe(404);
    const done = await lineWhere((l) => l.reqId === 'redact-2' && typeof l.msg === 'string');
    expect(done.msg).toBe('GET /share/[redacted]?[redacted] 404');
    const all = raw.join('\n');
    for (const secret of ['share-token-secret', 'signature-secret', 'feed-secret']) {
      expect(all).not.toContain(secret);
    }
  });
});

describe('loggableUrl', () => {
  it('keeps the path, drops the query and masks a share token', () => {
    expect(loggableUrl('/api/documents')).toBe('/api/documents');
    expect(loggableUrl('/files/a/b?exp=1&sig=x')).toBe('/files/a/b?[redacted]');
    expect(loggableUrl('/share/abc/def')).toBe('/share/[redacted]/def');
  });
});
