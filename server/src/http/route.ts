import { bearerFrom } from '@notary/platform/trpc/context';
import type { Request, RequestHandler, Response } from 'express';
import type { AppDeps } from '../deps';
import type { Actor } from '../domain/tenancy/actor';
import { authenticate } from '../domain/tenancy/authenticate';
import { sendError } from '../trpc/errors';

/** What every plain Express route's handler gets. */
export interface RouteContext {
  req: Request;
  res: Response;
  /**
   * Aborted when the client hangs up before the answer is complete (the response closed unfinished): pass it
   * to long work (a render, a stream) so that it stops for nobody.
   */
  signal: AbortSignal;
}

/** What a route behind a session gets besides: the request's own EntityManager and the verified caller. */
export interface SessionRouteContext extends RouteContext {
  /** This request's fork of the database's EntityManager (MikroORM's unit of work is per request). */
  em: ReturnType<AppDeps['db']['fork']>;
  /** The caller of `Authorization: Bearer <session JWT>`, with the tenant and role resolved. */
  actor: Actor;
}

/**
 * A public plain Express route (no session: a signed URL, a signed webhook). `handler` answers itself; what it
 * throws is answered by `sendError` as the REST error body `{message, code}` with the error table's status
 * (`shared/src/errors.ts`), except when the client hung up: nobody is left to answer, the response is dropped.
 * When the headers already went out (a failure mid-stream), the socket is destroyed instead.
 */
export function publicRoute(handler: (ctx: RouteContext) => Promise<void>): RequestHandler {
  return async (req, res) => {
    // The response closes before it is finished only when the client went away.
    const left = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) left.abort(new Error('the client closed the connection'));
    });
    try {
      await handler({ req, res, signal: left.signal });
    } catch (e) {
      // Not `req.destroyed`: a request whose body was read is destroyed soon after, the client still there.
      if (left.signal.aborted || res.socket?.destroyed) {
        res.destroy();
        return;
      }
      sendError(res, e);
    }
  };
}

/**
 * A plain Express route behind a session (spec, Authentication: items 1-2): forks the request's EntityManager,
 * verifies the bearer session JWT and resolves the caller's tenant and role (`authenticate`), then runs
 * `handler`; errors are answered as in `publicRoute` (401 without or with a bad token, 403 not a member of
 * the token's organization). Role checks stay with the domain function the handler calls.
 */
export function route(
  deps: Pick<AppDeps, 'db' | 'tokens' | 'memberships'>,
  handler: (ctx: SessionRouteContext) => Promise<void>,
): RequestHandler {
  return publicRoute(async ({ req, res, signal }) => {
    const em = deps.db.fork();
    const actor = await authenticate(em, deps, bearerFrom(req.headers.authorization), req.ip ?? null);
    await handler({ req, res, signal, em, actor });
  });
}
