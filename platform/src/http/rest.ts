import { type AnyTRPCRouter, initTRPC } from '@trpc/server';
import { type Request, type Response, Router } from 'express';
import {
  forEachOpenApiProcedure,
  getInputOutputParsers,
  type OpenAPIObject,
  type OpenApiMethod,
} from 'trpc-to-openapi';

/** Extra procedure metadata read by the REST binder, beside trpc-to-openapi's `openapi`. */
export interface RestMeta {
  rest?: {
    /** Success status (default 200). */
    status?: number;
    /** `Cache-Control` of a successful response, computed from the output (default: the binder's). */
    cacheControl?: (output: unknown) => string;
  };
}

export interface RestRouterOptions<Context> {
  /** Writes the REST error body of anything a procedure throws (the service's `sendError`). */
  sendError: (res: Response, error: unknown) => void;
  /** `Cache-Control` of a successful response whose procedure has no `meta.rest.cacheControl`. */
  defaultCacheControl: string;
  /** Called after a procedure succeeded, before its answer is written: extra headers (e.g. `Server-Timing`). */
  beforeSend?: (res: Response, context: Context, output: unknown) => void;
}

/** Express's router method of each OpenAPI method. */
const EXPRESS_METHODS = {
  GET: 'get',
  POST: 'post',
  PATCH: 'patch',
  PUT: 'put',
  DELETE: 'delete',
} as const satisfies Record<OpenApiMethod, string>;

/** One procedure served at a REST path, as read once from its metadata when the routes are bound. */
export interface RestBinding {
  /** The procedure's path in the router, by segment (`['documents', 'get']` for `documents.get`). */
  path: string[];
  method: (typeof EXPRESS_METHODS)[OpenApiMethod];
  /** The Express route of the OpenAPI path (`/api/documents/{id}` is served at `/api/documents/:id`). */
  route: string;
  /** The OpenAPI path, e.g. `/api/documents/{id}`. */
  openapiPath: string;
  /** Input from the JSON body (POST, PATCH, PUT), else from the query string; path params win over both. */
  takesBody: boolean;
  /** Whether the procedure declares an input; one without is called with `undefined`. */
  hasInput: boolean;
  rest: RestMeta['rest'];
}

/**
 * Every procedure of `appRouter` with `meta.openapi` (and not `enabled: false`), found by trpc-to-openapi's own
 * procedure walk: the REST face serves exactly the operations the OpenAPI document lists.
 */
export function restBindings(appRouter: AnyTRPCRouter): RestBinding[] {
  const bindings: RestBinding[] = [];
  forEachOpenApiProcedure<RestMeta>(appRouter._def.procedures, ({ path, procedure, meta }) => {
    const method = EXPRESS_METHODS[meta.openapi.method];
    bindings.push({
      path: path.split('.'),
      method,
      route: meta.openapi.path.replace(/\{(\w+)\}/g, ':$1'),
      openapiPath: meta.openapi.path,
      takesBody: method === 'post' || method === 'patch' || method === 'put',
      hasInput: getInputOutputParsers(procedure).hasInputsDefined,
      rest: meta.rest,
    });
  });
  return bindings;
}

/**
 * `document` (trpc-to-openapi's, which lists every success as 200) with each procedure's own success status
 * (`meta.rest.status`, e.g. 201 Created, 202 Accepted) in its responses, as the binder answers it.
 * Mutates and returns `document`.
 */
export function withRestStatuses(document: OpenAPIObject, appRouter: AnyTRPCRouter): OpenAPIObject {
  for (const binding of restBindings(appRouter)) {
    const status = binding.rest?.status;
    if (status === undefined || status === 200) continue;
    const responses = document.paths?.[binding.openapiPath]?.[binding.method]?.responses;
    if (!responses?.['200']) continue;
    responses[String(status)] = responses['200'];
    delete responses['200'];
  }
  return document;
}

/** tRPC's server-side caller factory; a caller takes everything (middlewares, parsers) from the router given. */
const { createCallerFactory } = initTRPC.create();

/**
 * A node of tRPC's caller, which is a recursive proxy: each property is again a node, and calling a node runs
 * the procedure at the path walked so far.
 */
type CallerNode = ((input: unknown) => Promise<unknown>) & {
  readonly [segment: string]: CallerNode | undefined;
};

function isCallerNode(value: unknown): value is CallerNode {
  return typeof value === 'function';
}

/** The call of the procedure at `path` of a caller (paths come from the router itself, see `restBindings`). */
function procedureCall(caller: unknown, path: readonly string[]): CallerNode {
  let node = caller;
  for (const segment of path) node = isCallerNode(node) ? node[segment] : undefined;
  if (!isCallerNode(node)) throw new Error(`No procedure at ${path.join('.')}`);
  return node;
}

/**
 * Serves every procedure of `appRouter` that has `meta.openapi` at its REST path (the spec's public face),
 * through a caller of `createCallerFactory`, so REST and tRPC run the same procedure and the same domain code.
 * trpc-to-openapi generates the OpenAPI document from the same metadata; this binder exists because the spec's
 * error statuses (410, 502, 503) and cache headers do not fit its HTTP handler.
 * Input: path params plus query string (GET, DELETE) or JSON body (POST, PATCH, PUT); `undefined` for a
 * procedure without input. Success: `meta.rest.status` (default 200) with the output as JSON and
 * `Cache-Control` from `meta.rest.cacheControl(output)` or `defaultCacheControl`. Errors: `sendError`. The
 * procedure's `signal` aborts when the client hangs up first; then nothing is answered.
 * @param createContext the context of one request (as the tRPC adapter builds it); `res` lets procedures set
 *   response headers (e.g. the rate limit headers).
 */
export function restRouter<Context extends object>(
  appRouter: AnyTRPCRouter,
  createContext: (req: Request, res: Response) => Context,
  options: RestRouterOptions<Context>,
): Router {
  const express = Router();
  const createCaller = createCallerFactory(appRouter);
  for (const binding of restBindings(appRouter)) {
    express[binding.method](binding.route, async (req: Request, res: Response) => {
      // The procedure's `signal`, as tRPC's own adapter gives it on /trpc: aborted when the client hangs up
      // before the answer is complete (the response closed unfinished), so long work stops for nobody.
      const left = new AbortController();
      res.once('close', () => {
        if (!res.writableFinished) left.abort(new Error('the client closed the connection'));
      });
      try {
        const ctx = createContext(req, res);
        const call = procedureCall(createCaller(ctx, { signal: left.signal }), binding.path);
        const source: object = binding.takesBody ? (req.body ?? {}) : req.query;
        const output = await call(binding.hasInput ? { ...source, ...req.params } : undefined);
        options.beforeSend?.(res, ctx, output);
        res.setHeader('Cache-Control', binding.rest?.cacheControl?.(output) ?? options.defaultCacheControl);
        res.status(binding.rest?.status ?? 200).json(output);
      } catch (e) {
        // Nobody is left to answer: the error is what the abort made the work throw.
        if (left.signal.aborted) {
          res.destroy();
          return;
        }
        options.sendError(res, e);
      }
    });
  }
  return express;
}
