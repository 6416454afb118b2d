import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../harness/http';
import { startTestService, type TestService } from '../harness/service';

/**
 * Development conveniences (the e-mail access answer's `token`, spec: "in development a `token` field is also
 * included") are served only to requests made directly on the machine: with `NODE_ENV=development`, a request
 * that carries a proxy's forwarding header (a reverse proxy on the same host connects from loopback too) gets
 * the production answer, on both faces. Requests from beyond loopback: `server/src/http/local-request.test.ts`.
 */

let t: TestService;

beforeAll(async () => {
  t = await startTestService('pglite', { NODE_ENV: 'development' });
}, 120_000);

afterAll(async () => {
  await t?.close();
});

const ask = (headers: Record<string, string> = {}) =>
  api<{ message: string; token?: string }>(t.url, `/access/email/${randomUUID()}/request`, {
    method: 'POST',
    body: { email: 'ana@example.com' },
    headers,
  });

describe('development conveniences are local only', () => {
  it('a direct request from loopback gets the token', async () => {
    const res = await ask();
    expect(res.status).toBe(200);
    expect(res.body.token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  });

  it.each([
    ['X-Forwarded-For', { 'x-forwarded-for': '127.0.0.1' }],
    ['X-Forwarded-For naming a remote client', { 'x-forwarded-for': '203.0.113.7' }],
    ['X-Forwarded-Proto', { 'x-forwarded-proto': 'https' }],
    ['X-Forwarded-Host', { 'x-forwarded-host': 'notary.example' }],
    ['Forwarded', { forwarded: 'for=127.0.0.1;proto=https' }],
    ['Via', { via: '1.1 nginx' }],
    ['X-Real-IP', { 'x-real-ip': '127.0.0.1' }],
  ])('through a proxy (%s): the production answer, without the token', async (_name, headers) => {
    const res = await ask(headers);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      message: 'If this address is authorized for this document, an access link will be sent to it.',
    });
  });

  it('the tRPC face follows the same rule', async () => {
    const call = async (headers: Record<string, string>) => {
      const res = await api<{ result: { data: { message: string; token?: string } } }>(
        t.url,
        '/trpc/access.emailAccessRequest',
        { method: 'POST', body: { documentId: randomUUID(), email: 'ana@example.com' }, headers },
      );
      expect(res.status).toBe(200);
      return res.body.result.data;
    };
    expect((await call({})).token).toBeDefined();
    expect(await call({ 'x-forwarded-for': '127.0.0.1' })).not.toHaveProperty('token');
  });
});

describe('development conveniences need a PUBLIC_URL on this machine', () => {
  let announced: TestService;
  beforeAll(async () => {
    // A same-host proxy that adds no forwarding header (nginx's default proxy_pass) connects from loopback: the
    // service announced under a public name must not take it for its own user.
    announced = await startTestService('pglite', {
      NODE_ENV: 'development',
      PUBLIC_URL: 'https://notary.example',
    });
  }, 120_000);
  afterAll(async () => {
    await announced?.close();
  });

  it('a direct loopback request gets the production answer when PUBLIC_URL names another host', async () => {
    const res = await api<{ message: string; token?: string }>(
      announced.url,
      `/access/email/${randomUUID()}/request`,
      { method: 'POST', body: { email: 'ana@example.com' } },
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      message: 'If this address is authorized for this document, an access link will be sent to it.',
    });
  });
});
