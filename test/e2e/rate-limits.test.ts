import { randomBytes, randomUUID } from 'node:crypto';
import { RATE_LIMITS, TRPC_MAX_BATCH_SIZE } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, uploadFile } from '../harness/http';
import { startTestService, type TestService } from '../harness/service';
import { freshEmail } from '../harness/tenants';

/** A client IP of its own per test (the service trusts X-Forwarded-For from loopback, as behind a proxy). */
const randomIp = () => `10.${randomBytes(3).join('.')}`;
const randomHash = () => randomBytes(32).toString('hex');

type TrpcAnswer = Array<{
  result?: { data: unknown };
  error?: { message: string; data: { code: string; httpStatus: number; retryAfterSeconds?: number } };
}>;

/** One `/trpc` batch GET of `calls` (procedure path and input), as the tRPC client sends it. */
async function trpcBatch(
  base: string,
  calls: Array<[string, unknown]>,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: TrpcAnswer }> {
  const paths = calls.map(([p]) => p).join(',');
  const input = Object.fromEntries(calls.map(([, i], n) => [String(n), i]));
  const res = await fetch(
    `${base}/trpc/${paths}?batch=1&input=${encodeURIComponent(JSON.stringify(input))}`,
    { headers },
  );
  return { status: res.status, headers: res.headers, body: (await res.json()) as TrpcAnswer };
}

describe('rate limits (spec, Limits), counted per procedure on both faces', () => {
  let t: TestService;

  beforeAll(async () => {
    t = await startTestService('postgresql', { RATE_LIMITS: 'on' });
  });
  afterAll(async () => {
    await t?.close();
  });

  const verify = (ip: string) =>
    api<Record<string, unknown>>(t.url, `/api/public/verify?hash=${randomHash()}`, {
      headers: { 'x-forwarded-for': ip },
    });

  it('the 31st public verification in a minute is 429 with Retry-After and the standard headers', async () => {
    const ip = randomIp();
    for (let i = 1; i <= RATE_LIMITS.publicVerify; i++) {
      const ok = await verify(ip);
      expect(ok.status).toBe(200);
      expect(ok.headers.get('ratelimit-policy')).toBe('"global";q=120;w=60, "publicVerify";q=30;w=60');
      expect(ok.headers.get('ratelimit')).toMatch(
        new RegExp(`^"global";r=${120 - i};t=\\d+, "publicVerify";r=${30 - i};t=\\d+$`),
      );
    }
    const limited = await verify(ip);
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(limited.body).toEqual({
      message: `Too many requests (publicVerify limit): try again in ${retryAfter} s`,
      code: 'RATE_LIMITED',
      retryAfterSeconds: retryAfter,
    });
    expect(limited.headers.get('ratelimit')).toMatch(/"publicVerify";r=0;t=\d+$/);
    // Another client is not affected; the serial lookup shares the verification budget.
    expect((await verify(randomIp())).status).toBe(200);
    const serial = await api(t.url, '/api/public/documents/ABC-123456', {
      headers: { 'x-forwarded-for': ip },
    });
    expect(serial.status).toBe(429);
  });

  it('REST and /trpc (batched) spend one budget; each call of a batch counts', async () => {
    const ip = randomIp();
    const headers = { 'x-forwarded-for': ip };
    for (let i = 0; i < 10; i++) expect((await verify(ip)).status).toBe(200);
    const calls = Array.from({ length: 20 }, (): [string, unknown] => [
      'public.verify',
      { hash: randomHash() },
    ]);
    const batch = await trpcBatch(t.url, calls, headers);
    expect(batch.status).toBe(200);
    expect(batch.body.every((r) => r.result !== undefined)).toBe(true);
    // 10 + 20 = 30: the next call, through either face, is over.
    const single = await trpcBatch(t.url, [['public.verify', { hash: randomHash() }]], headers);
    expect(single.status).toBe(429);
    expect(single.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(single.body[0]?.error?.data).toMatchObject({ code: 'RATE_LIMITED', httpStatus: 429 });
    expect(single.body[0]?.error?.data.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((await verify(ip)).status).toBe(429);
  });

  it('a batch within the budget is answered call by call: the calls past it get 429', async () => {
    const ip = randomIp();
    const calls = Array.from({ length: 35 }, (): [string, unknown] => [
      'public.verify',
      { hash: randomHash() },
    ]);
    const batch = await trpcBatch(t.url, calls, { 'x-forwarded-for': ip });
    const codes = batch.body.map((r) => (r.result ? 200 : r.error?.data.httpStatus));
    expect(codes.filter((c) => c === 200)).toHaveLength(RATE_LIMITS.publicVerify);
    expect(codes.filter((c) => c === 429)).toHaveLength(35 - RATE_LIMITS.publicVerify);
  });

  it(`a tRPC batch over ${TRPC_MAX_BATCH_SIZE} calls is refused whole with 400, and spends nothing`, async () => {
    const ip = randomIp();
    const calls = Array.from({ length: 200 }, (): [string, unknown] => ['system.health', undefined]);
    const res = await fetch(`${t.url}/trpc/${calls.map(([p]) => p).join(',')}?batch=1&input={}`, {
      headers: { 'x-forwarded-for': ip },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: {
        message: 'Batch call exceeds maximum size',
        code: -32600,
        data: { code: 'BAD_REQUEST', httpStatus: 400 },
      },
    });
    expect((await verify(ip)).headers.get('ratelimit')).toMatch(/^"global";r=119;/);
  });

  it('the global limit: 120 calls a minute per user, whatever the procedure and the IP', async () => {
    const token = await t.token(freshEmail('global'));
    const statuses: number[] = [];
    for (let i = 0; i < RATE_LIMITS.global; i++) {
      // A new IP each time: an authenticated caller is counted as the user, not by address.
      const res = await api(t.url, '/api/documents', { token, headers: { 'x-forwarded-for': randomIp() } });
      statuses.push(res.status);
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const over = await trpcBatch(t.url, [['documents.list', undefined]], {
      authorization: `Bearer ${token}`,
    });
    expect(over.body[0]?.error?.data.code).toBe('RATE_LIMITED');
    // Another user from the same IP still has a budget.
    const other = await t.token(freshEmail('other'));
    expect((await api(t.url, '/api/documents', { token: other })).status).toBe(200);
  });

  it('uploads: 10 a minute per user (the 11th is 429 and stores nothing), other users unaffected', async () => {
    const token = await t.token(freshEmail('uploader'));
    const file = `${import.meta.dirname}/rate-limits.test.ts`;
    const statuses: number[] = [];
    for (let i = 0; i <= RATE_LIMITS.upload; i++) {
      const form = new FormData();
      form.set('consent', 'true');
      form.set('file', new Blob([randomUUID()]), `n${i}.txt`);
      const res = await fetch(`${t.url}/api/documents/upload`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}` },
        body: form,
      });
      statuses.push(res.status);
      if (res.status === 429) {
        expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(await res.json()).toMatchObject({ code: 'RATE_LIMITED' });
        // Refused before its body is read: the connection is not kept for the rest of it.
        expect(res.headers.get('connection')).toBe('close');
      } else await res.arrayBuffer();
    }
    expect(statuses).toEqual([...Array(RATE_LIMITS.upload).fill(201), 429]);
    // A large refused upload gets its 429 too, not a reset, although its body is not read to the end.
    const big = new FormData();
    big.set('consent', 'true');
    big.set('file', new Blob([Buffer.alloc(32 * 1024 * 1024, 1)]), 'big.bin');
    const refused = await fetch(`${t.url}/api/documents/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: big,
    });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('connection')).toBe('close');
    expect(await refused.json()).toMatchObject({ code: 'RATE_LIMITED' });
    const listed = await api<{ documents: unknown[] }>(t.url, '/api/documents', { token });
    expect(listed.body.documents).toHaveLength(RATE_LIMITS.upload);
    expect((await uploadFile(t.url, await t.token(freshEmail('u2')), file)).status).toBe(201);
  });

  it('malformed ids are 404 (spec: missing) and NUL bytes 400 on both faces, never a database error', async () => {
    const token = await t.token(freshEmail('ids'));
    const dashes = '-'.repeat(36);
    const rest = await api<Record<string, unknown>>(t.url, `/api/documents/${dashes}`, { token });
    expect(rest.status).toBe(404);
    expect(rest.body).toEqual({ message: 'Document not found', code: 'NOT_FOUND' });
    const trpc = await trpcBatch(t.url, [['documents.get', { id: dashes }]], {
      authorization: `Bearer ${token}`,
    });
    expect(trpc.status).toBe(404);
    expect(trpc.body[0]?.error?.data).toMatchObject({ code: 'NOT_FOUND', httpStatus: 404 });
    expect(JSON.stringify(trpc.body)).not.toMatch(/syntax|postgres|relation|invalid input/i);

    const nul = await trpcBatch(t.url, [['documents.get', { id: `${randomUUID()}\u0000` }]], {
      authorization: `Bearer ${token}`,
    });
    expect(nul.status).toBe(400);
    const body = await api<Record<string, unknown>>(t.url, '/api/org', {
      token,
      method: 'PATCH',
      body: { name: 'a\u0000b' },
    });
    expect(body).toMatchObject({
      status: 400,
      body: { message: 'Text fields must not contain NUL characters', code: 'BAD_REQUEST' },
    });
    const inPath = await api(t.url, '/api/public/documents/ABC%00-123', {});
    expect(inPath.status).toBe(400);
  });
});

describe('RATE_LIMITS=off (benchmarks, bulk imports)', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService('pglite', { RATE_LIMITS: 'off' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('counts nothing and sends no rate limit headers', async () => {
    const ip = randomIp();
    for (let i = 0; i <= RATE_LIMITS.publicVerify + 5; i++) {
      const res = await api(t.url, `/api/public/verify?hash=${randomHash()}`, {
        headers: { 'x-forwarded-for': ip },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit')).toBeNull();
    }
  });
});
