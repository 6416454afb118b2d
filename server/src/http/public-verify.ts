import { bearerFrom } from '@notary/platform/trpc/context';
import { SHA256_HEX_PATTERN, type VerifyByHashDto } from '@notary/shared';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AppDeps } from '../deps';
import { verifyByHashCached } from '../domain/documents/service';
import { sendError } from '../trpc/errors';
import { enforceRateLimit } from '../trpc/rate-limit';
import {
  PUBLIC_VERIFY_RATE_LIMIT,
  PublicVerifyInput,
  publicVerifyCacheControl,
} from '../trpc/routers/public/verify';

/**
 * The JSON text of an answer, kept per answer object: the cache hands out the same object for a known hash,
 * so a warm hash is serialized once, not per request (entries go with the cache's own).
 */
const bodies = new WeakMap<VerifyByHashDto, string>();
function serialized(answer: VerifyByHashDto): string {
  let body = bodies.get(answer);
  if (body === undefined) {
    body = JSON.stringify(answer);
    bodies.set(answer, body);
  }
  return body;
}

/**
 * `GET /api/public/verify?hash=` (spec, Public, no credentials: public verification), served without the tRPC
 * caller: the busiest
 * public route, where the caller's per-request work (a proxy per call, a context object spread at each of
 * four middlewares, output validation) cost more than the cached answer itself (profiled with
 * `--cpu-prof`). It answers exactly what the `public.verify` procedure answers, which stays the route of the
 * tRPC face and of the OpenAPI document: the same limits (`global` and `publicVerify`, counted before the
 * input is validated, as the procedure's middleware does), the same input schema, the same domain function
 * and cache (`verifyByHashCached`), the same `Cache-Control`, the same error table (`sendError`: 400 for a
 * malformed hash, 429 over a limit). Statuses: 200 `{found, document?}`; 400; 429.
 * An answer the cache holds is written at once, without a promise in between (most of the route's calls).
 * Mount it after request logging, the security headers and CORS, behind `rejectNulBytes`.
 */
export function publicVerifyRoute(deps: AppDeps): RequestHandler {
  const limits = ['global', PUBLIC_VERIFY_RATE_LIMIT] as const;
  const fork = () => deps.db.fork();
  // A promise only when the answer must be read: Express passes a rejection of it on, as for any route.
  const answer = (res: Response, hash: string): Promise<void> | undefined => {
    const hit = deps.verifyCache.cached(hash);
    if (hit) {
      send(res, hit);
      return undefined;
    }
    return verifyByHashCached(deps.verifyCache, fork, hash)
      .then((found) => send(res, found))
      .catch((e: unknown) => sendError(res, e));
  };
  const limited = async (req: Request, res: Response): Promise<void> => {
    try {
      await enforceRateLimit(
        deps,
        { bearer: bearerFrom(req.headers.authorization), ip: req.ip ?? null },
        limits,
        (name, value) => {
          if (!res.headersSent) res.setHeader(name, value);
        },
      );
      await answer(res, hashOf(req.query));
    } catch (e) {
      sendError(res, e);
    }
  };
  return (req, res) => {
    // With the limits off (an operator's RATE_LIMITS=off) there is nothing to wait for.
    if (deps.rateLimiter.enabled) return limited(req, res);
    try {
      return answer(res, hashOf(req.query));
    } catch (e) {
      sendError(res, e);
      return undefined;
    }
  };
}

/**
 * The `hash` of a verify query, lower-cased: what `PublicVerifyInput` parses out of it. A string of the schema's
 * own pattern is taken as the schema would take it (other keys are dropped by the schema anyway), without its
 * object parse; anything else goes through the schema, for the same result or the same error.
 * @throws ZodError for a missing or malformed hash (400 through `sendError`).
 */
function hashOf(query: Request['query']): string {
  const hash = query.hash;
  if (typeof hash === 'string' && SHA256_HEX_PATTERN.test(hash)) return hash.toLowerCase();
  return PublicVerifyInput.parse({ ...query }).hash;
}

/** Writes `answer` with its `Cache-Control`: what `res.json` sends, without its content-type negotiation. */
function send(res: Response, answer: VerifyByHashDto): void {
  res.setHeader('Cache-Control', publicVerifyCacheControl(answer));
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  // Node sets Content-Length.
  res.end(serialized(answer));
}

/**
 * `GET` of exactly `path` (the public verify route) through `stages`, the route and the middleware Express
 * runs before it there, in that order, called one after the other as Express would call them, without
 * Express's router walking the app's layers between them (each layer's path match and prefix trim: about a
 * tenth of a cached verify's CPU, profiled with `--cpu-prof` under `npm run bench`). Mount it first. Any other
 * request (another method, HEAD included, or another spelling of the path Express would also match, such as
 * a trailing slash) goes on with `next()` to the app's own chain, which holds the same stages. An error a stage
 * passes to its `next` goes to the app's error handler, as there.
 * The query string is parsed once for the stages (Express 5 parses it again at each read of `req.query`).
 */
export function publicVerifyLane(path: string, stages: readonly RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'GET' || req.path !== path) {
      next();
      return;
    }
    res.locals.routeTemplate = path;
    Object.defineProperty(req, 'query', {
      value: req.query,
      writable: true,
      enumerable: true,
      configurable: true,
    });
    runStages(stages, req, res, next);
  };
}

function runStages(stages: readonly RequestHandler[], req: Request, res: Response, done: NextFunction): void {
  new StageRun(stages, req, res, done).next();
}

/**
 * One request's walk through the stages. A class with a bound `next` rather than a closure per request: the
 * tsx loader names every function expression it compiles (`keepNames`), a property definition each time.
 */
class StageRun {
  private index = 0;
  readonly next: (error?: unknown) => void;

  constructor(
    private readonly stages: readonly RequestHandler[],
    private readonly req: Request,
    private readonly res: Response,
    private readonly done: NextFunction,
  ) {
    this.next = this.step.bind(this);
  }

  private step(error?: unknown): void {
    if (error !== undefined && error !== null) {
      this.done(error);
      return;
    }
    const stage = this.stages[this.index++];
    if (!stage) {
      this.done();
      return;
    }
    try {
      void stage(this.req, this.res, this.next);
    } catch (e) {
      this.done(e);
    }
  }
}
