import { AppError } from '@notary/shared';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { httpErrors } from '../http/errors';
import { formatTrpcError, mapAppError } from './errors';
import { initTrpc } from './init';

const { toAppError } = httpErrors({
  fromZod: (e) => new AppError('BAD_REQUEST', e.issues[0]?.message ?? 'invalid'),
});
const t = initTrpc<object>().create({ isDev: false, errorFormatter: formatTrpcError(toAppError) });
const p = t.procedure.use(t.middleware(async ({ next }) => mapAppError(await next())));
const router = t.router({
  database: p.query(() => {
    throw new Error('relation "document" does not exist at character 15 (PostgreSQL)');
  }),
  limited: p.query(() => {
    throw new AppError('RATE_LIMITED', 'Too many requests', { retryAfterSeconds: 7 });
  }),
  typed: p.input(z.object({ n: z.number() })).query(({ input }) => input.n),
});

async function call(path: string, input?: unknown): Promise<{ status: number; body: unknown }> {
  const query = input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  const res = await fetchRequestHandler({
    endpoint: '/trpc',
    req: new Request(`http://localhost/trpc/${path}${query}`),
    router,
    createContext: () => ({}),
  });
  return { status: res.status, body: await res.json() };
}

/** `formatTrpcError`, the REST face's masking on `/trpc`: no internal error text reaches a client. */
describe('tRPC error formatter', () => {
  it('never lets internal error text out: database errors become "Internal error"', async () => {
    const res = await call('database');
    expect(res.status).toBe(500);
    expect(JSON.stringify(res.body)).not.toMatch(/relation|PostgreSQL|stack|at /);
    expect(res.body).toEqual({
      error: {
        message: 'Internal error',
        code: -32603,
        data: { code: 'INTERNAL', httpStatus: 500, path: 'database' },
      },
    });
  });

  it('keeps an AppError message, its status and the wait of a 429', async () => {
    expect(await call('limited')).toEqual({
      status: 429,
      body: {
        error: {
          message: 'Too many requests',
          code: -32029,
          data: { code: 'RATE_LIMITED', httpStatus: 429, path: 'limited', retryAfterSeconds: 7 },
        },
      },
    });
  });

  it('malformed input JSON and invalid input are 400, not 500', async () => {
    const res = await fetchRequestHandler({
      endpoint: '/trpc',
      req: new Request('http://localhost/trpc/typed?input=%7Bnot-json'),
      router,
      createContext: () => ({}),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { data: { code: 'BAD_REQUEST', httpStatus: 400 } } });
    expect(await call('typed', { n: 'x' })).toMatchObject({
      status: 400,
      body: { error: { data: { code: 'BAD_REQUEST' } } },
    });
  });
});
