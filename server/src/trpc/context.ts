import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import type { SqlEntityManager } from '@mikro-orm/sql';
import type { Log } from '@notary/platform/log';
import { bearerFrom, lazyEntityManager } from '@notary/platform/trpc/context';
import type { AppDeps } from '../deps';
import { type ArrivalCount, takeArrivalCount } from './arrival-count';
import { isDirectLoopbackRequest } from './local-request';

/** Per-request context of every procedure, for both faces (tRPC at `/trpc`, REST at the spec's paths). */
export interface Context {
  deps: AppDeps;
  /**
   * This request's own EntityManager, forked on first use: public routes answered from cache never pay for it.
   */
  em: () => SqlEntityManager;
  /** Raw bearer token, verified lazily by `authedProcedure`. */
  bearer: string | null;
  ip: string | null;
  /** The request's `Accept-Language` header (language of mail the request triggers, e.g. invitations). */
  acceptLanguage: string | null;
  /** Sets a header of the response (rate limit headers); a no-op where there is no response (tests' callers). */
  setHeader: (name: string, value: string) => void;
  /**
   * True when the request came from this machine's loopback with no proxy header (`isDirectLoopbackRequest`):
   * the only requests development conveniences are served to. False for calls without a request.
   */
  directLoopback: boolean;
  /**
   * The call's logger: the request's (`req.log`, a child carrying its `reqId`, the id of its access log line and
   * of its `X-Request-Id` header) on both HTTP faces; a child with a fresh `reqId` for a call without HTTP.
   * Procedures log through it and hand it to the domain (`{ ...ctx.deps, log: ctx.log }`), so every line a
   * request causes carries its id.
   */
  log: Log;
  /**
   * The request's count against the global limit made on arrival (`countGlobalOnArrival`), given to the first
   * call that asks (`takeArrivalCount`); undefined after that, and for requests not counted on arrival.
   */
  takeArrivalCount: () => ArrivalCount | undefined;
}

/** What a call brings besides the service's dependencies, already read from its request (if there is one). */
export interface CallOrigin {
  /** The bearer token (session JWT, or an acervo token), without the `Bearer ` scheme. */
  bearer?: string | null;
  /** The client's address, as the rate limits and the access log see it. */
  ip?: string | null;
  acceptLanguage?: string | null;
  /** Where response headers go; none for a call without a response. */
  setHeader?: (name: string, value: string) => void;
  /** See `Context.directLoopback`; default false. */
  directLoopback?: boolean;
  /** The request's logger (see `Context.log`); default: a child of `deps.log` with a fresh `reqId`. */
  log?: Log;
  /** See `Context.takeArrivalCount`; default: none. */
  takeArrivalCount?: () => ArrivalCount | undefined;
}

/**
 * The context of one call, without HTTP (tRPC's "inner context"): what the HTTP faces build from a request,
 * and what a server-side caller (`appRouter.createCaller`, the procedure tests) is given directly. Every
 * field of `origin` defaults to none (anonymous, no address, no language, headers dropped).
 */
export function createInnerContext(deps: AppDeps, origin: CallOrigin = {}): Context {
  return {
    deps,
    em: lazyEntityManager(deps.db),
    bearer: origin.bearer ?? null,
    ip: origin.ip ?? null,
    acceptLanguage: origin.acceptLanguage ?? null,
    setHeader: origin.setHeader ?? (() => {}),
    directLoopback: origin.directLoopback ?? false,
    log: origin.log ?? deps.log.child({ module: 'trpc', reqId: randomUUID() }),
    takeArrivalCount: origin.takeArrivalCount ?? (() => undefined),
  };
}

/**
 * The context of an HTTP request, on either face: `createInnerContext` with the request's bearer token (RFC 6750
 * section 2.1), address, `Accept-Language` and whether it came straight from loopback, and its logger (`req.log`,
 * set by `requestLogging`, first in line), and its global count made on arrival; response headers are set until
 * the response has started.
 */
export function createContext(
  deps: AppDeps,
  req: {
    headers: IncomingHttpHeaders;
    ip?: string | undefined;
    socket?: { remoteAddress?: string | undefined } | undefined;
    log?: Log | undefined;
  },
  res?: { setHeader(name: string, value: string): unknown; headersSent: boolean },
): Context {
  return createInnerContext(deps, {
    bearer: bearerFrom(req.headers.authorization),
    ip: req.ip ?? null,
    acceptLanguage: req.headers['accept-language'] ?? null,
    directLoopback: isDirectLoopbackRequest(req),
    ...(req.log ? { log: req.log } : {}),
    takeArrivalCount: () => takeArrivalCount(req),
    setHeader: (name, value) => {
      if (res && !res.headersSent) res.setHeader(name, value);
    },
  });
}
