import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError, errorMessage } from '@notary/shared';
import express, { type RequestHandler } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import type { AppDeps } from '../deps';
import { publicRoute, type RouteContext, route } from './route';

const servers: http.Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** Serves `handler` at `POST /x` behind `express.raw`, and records the promise of each wrapped call. */
async function serve(handler: RequestHandler): Promise<{ url: string; calls: Promise<unknown>[] }> {
  const calls: Promise<unknown>[] = [];
  const app = express();
  app.post('/x', express.raw({ type: () => true }), (req, res, next) => {
    calls.push(Promise.resolve(handler(req, res, next)));
  });
  const server = http.createServer(app);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`, calls };
}

describe('publicRoute', () => {
  it('answers what the handler throws as {message, code}, also once the read request is destroyed', async () => {
    const { url } = await serve(
      publicRoute(async ({ req }) => {
        // Node destroys a request soon after its body was read: the client is still there to be answered.
        if (!req.destroyed) await once(req, 'close');
        throw new AppError('CONFLICT', 'already there');
      }),
    );
    const res = await fetch(url, { method: 'POST', body: '{}' });
    expect(res.status).toBe(409);
    expect(await res.json()).toEqual({ message: 'already there', code: 'CONFLICT' });
  });

  it('hides an unexpected error as INTERNAL', async () => {
    const { url } = await serve(
      publicRoute(async () => {
        throw new Error('secret detail');
      }),
    );
    const res = await fetch(url, { method: 'POST', body: '' });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ message: 'Internal error', code: 'INTERNAL' });
  });

  it('aborts the signal when the client hangs up, and then answers nothing', async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    let seen: RouteContext | undefined;
    const { url, calls } = await serve(
      publicRoute(async (ctx) => {
        seen = ctx;
        started();
        if (!ctx.signal.aborted) await once(ctx.signal, 'abort');
        throw new AppError('CONFLICT', 'too late');
      }),
    );
    const client = new AbortController();
    const request = fetch(url, { method: 'POST', body: '{}', signal: client.signal }).catch(
      (e: unknown) => e,
    );
    await running;
    client.abort();
    expect(await request).toBeInstanceOf(Error);
    await calls[0];
    if (!seen) throw new Error('the handler did not run');
    expect(seen.signal.aborted).toBe(true);
    expect(errorMessage(seen.signal.reason)).toBe('the client closed the connection');
    expect(seen.res.headersSent).toBe(false);
  });
});

describe('route', () => {
  it('authenticates before the handler runs: 401 without a bearer token, the handler never called', async () => {
    let called = false;
    const deps = {
      db: { fork: () => ({}) },
      tokens: {
        verify: async () => {
          throw new AppError('UNAUTHENTICATED', 'bad token');
        },
      },
      memberships: {},
    } as unknown as Pick<AppDeps, 'db' | 'tokens' | 'memberships'>;
    const { url } = await serve(
      route(deps, async () => {
        called = true;
      }),
    );
    const missing = await fetch(url, { method: 'POST', body: '' });
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as { code: string }).code).toBe('UNAUTHENTICATED');
    const bad = await fetch(url, { method: 'POST', body: '', headers: { authorization: 'Bearer x.y.z' } });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toEqual({ message: 'bad token', code: 'UNAUTHENTICATED' });
    expect(called).toBe(false);
  });
});
