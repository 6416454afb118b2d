import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express, { type Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { initTrpc } from '../trpc/init';
import { restRouter } from './rest';

/** What the `hold` procedure saw: its signal, and when it started and ended. */
const held: { signal: AbortSignal | undefined; started: () => void; ended: () => void } = {
  signal: undefined,
  started: () => undefined,
  ended: () => undefined,
};

/** A router exercising what the binder reads: path params, query, body, `meta.rest`, no input, errors. */
const t = initTrpc<{ user: string }>().create();
const router = t.router({
  items: t.router({
    get: t.procedure
      .meta({ openapi: { method: 'GET', path: '/items/{id}' } })
      .input(z.object({ id: z.string(), q: z.string().optional() }))
      .query(({ input, ctx }) => ({ id: input.id, q: input.q ?? null, user: ctx.user })),
    create: t.procedure
      .meta({
        openapi: { method: 'POST', path: '/items' },
        rest: { status: 201, cacheControl: (output) => `max-age=${(output as { n: number }).n}` },
      })
      .input(z.object({ n: z.number() }))
      .mutation(({ input }) => ({ n: input.n })),
    ping: t.procedure.meta({ openapi: { method: 'GET', path: '/ping' } }).query(({ input }) => ({
      input: input === undefined ? 'undefined' : 'defined',
    })),
    fail: t.procedure
      .meta({ openapi: { method: 'DELETE', path: '/items/{id}' } })
      .input(z.object({ id: z.string() }))
      .mutation(() => {
        throw new Error('boom');
      }),
    hold: t.procedure.meta({ openapi: { method: 'POST', path: '/hold' } }).mutation(async ({ signal }) => {
      held.signal = signal;
      held.started();
      if (signal && !signal.aborted) await once(signal, 'abort');
      held.ended();
      throw new Error('aborted');
    }),
    hidden: t.procedure.query(() => 'tRPC only'),
    disabled: t.procedure
      .meta({ openapi: { method: 'GET', path: '/disabled', enabled: false } })
      .query(() => 'tRPC only'),
    deeper: t.router({
      leaf: t.procedure
        .meta({ openapi: { method: 'PUT', path: '/deeper/{id}/leaf' } })
        .input(z.object({ id: z.string(), on: z.boolean() }))
        .mutation(({ input, ctx }) => ({ path: 'items.deeper.leaf', input, user: ctx.user })),
    }),
  }),
});

let base: string;
let server: ReturnType<ReturnType<typeof express>['listen']>;
const errors: unknown[] = [];
const timings: string[] = [];

beforeAll(async () => {
  const app = express();
  app.use(express.json());
  app.use(
    restRouter(router, (req) => ({ user: req.header('x-user') ?? 'anonymous' }), {
      sendError: (res: Response, error: unknown) => {
        errors.push(error);
        res.status(500).json({ message: 'Internal error', code: 'INTERNAL' });
      },
      defaultCacheControl: 'private, no-store',
      beforeSend: (res, ctx) => {
        timings.push(ctx.user);
        res.setHeader('Server-Timing', 'total;dur=1');
      },
    }),
  );
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('restRouter', () => {
  it('serves a query at its path with path params and query string merged, and the default Cache-Control', async () => {
    const res = await fetch(`${base}/items/a1?q=hello`, { headers: { 'x-user': 'ana' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(res.headers.get('server-timing')).toBe('total;dur=1');
    expect(await res.json()).toEqual({ id: 'a1', q: 'hello', user: 'ana' });
  });

  it('takes a JSON body for POST, with meta.rest status and Cache-Control computed from the output', async () => {
    const res = await fetch(`${base}/items`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ n: 7 }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('max-age=7');
    expect(await res.json()).toEqual({ n: 7 });
  });

  it('passes undefined to a procedure without input, even with a query string', async () => {
    expect(await (await fetch(`${base}/ping?x=1`)).json()).toEqual({ input: 'undefined' });
  });

  it('hands what a procedure throws (and invalid input) to sendError, and serves no procedure without openapi', async () => {
    errors.length = 0;
    expect((await fetch(`${base}/items/a1`, { method: 'DELETE' })).status).toBe(500);
    expect(
      (
        await fetch(`${base}/items`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"n":"x"}',
        })
      ).status,
    ).toBe(500);
    expect(errors).toHaveLength(2);
    expect((await fetch(`${base}/hidden`)).status).toBe(404);
  });

  it('gives the procedure a signal that aborts when the client hangs up, and then answers nothing', async () => {
    errors.length = 0;
    const started = new Promise<void>((resolve) => {
      held.started = resolve;
    });
    const ended = new Promise<void>((resolve) => {
      held.ended = resolve;
    });
    const client = new AbortController();
    const request = fetch(`${base}/hold`, { method: 'POST', signal: client.signal }).catch((e: unknown) => e);
    await started;
    expect(held.signal?.aborted).toBe(false);
    client.abort();
    expect(await request).toBeInstanceOf(Error);
    await ended;
    expect(held.signal?.reason).toEqual(new Error('the client closed the connection'));
    // The procedure's rejection reaches the binder in microtasks, all run before the next macrotask.
    await new Promise((resolve) => setImmediate(resolve));
    // The abort's error is nobody's to answer.
    expect(errors).toEqual([]);
  });

  it('serves a procedure nested deeper at its own path, and none whose openapi is disabled', async () => {
    const res = await fetch(`${base}/deeper/d1/leaf`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', 'x-user': 'bia' },
      body: JSON.stringify({ on: true, id: 'ignored: the path wins' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      path: 'items.deeper.leaf',
      input: { id: 'd1', on: true },
      user: 'bia',
    });
    expect((await fetch(`${base}/disabled`)).status).toBe(404);
  });
});
