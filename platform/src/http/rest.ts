import type { AnyProcedure, AnyRouter } from '@trpc/server';
import { type Request, type Response, Router } from 'express';
import type { OpenApiMeta } from 'trpc-to-openapi';

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

/**
 * Serves every procedure of `appRouter` that has `meta.openapi` at its REST path (the spec's public face),
 * through `router.createCaller`, so REST and tRPC run the same procedure and the same domain code.
 * trpc-to-openapi generates the OpenAPI document from the same metadata; this binder exists because the spec's
 * error statuses (410, 502, 503) and cache headers do not fit its HTTP handler.
 * Input: path params plus query string (GET, DELETE) or JSON body (POST, PATCH, PUT); `undefined` for a
 * procedure without input. Success: `meta.rest.status` (default 200) with the output as JSON and
 * `Cache-Control` from `meta.rest.cacheControl(output)` or `defaultCacheControl`. Errors: `sendError`.
 * @param createContext the context of one request (as the tRPC adapter builds it); `res` lets procedures set
 *   response headers (e.g. the rate limit headers).
 */
export function restRouter<Context>(
  appRouter: AnyRouter,
  createContext: (req: Request, res: Response) => Context,
  options: RestRouterOptions<Context>,
): Router {
  const express = Router();
  const procedures = appRouter._def.procedures as Record<string, AnyProcedure>;
  for (const [path, procedure] of Object.entries(procedures)) {
    const meta = procedure._def.meta as OpenApiMeta<RestMeta> | undefined;
    const openapi = meta?.openapi;
    if (!openapi || openapi.enabled === false) continue;
    const route = openapi.path.replace(/\{(\w+)\}/g, ':$1');
    const method = openapi.method.toLowerCase() as 'get' | 'post' | 'patch' | 'put' | 'delete';
    const takesBody = method === 'post' || method === 'patch' || method === 'put';
    express[method](route, async (req: Request, res: Response) => {
      try {
        const ctx = createContext(req, res);
        const caller = appRouter.createCaller(ctx) as unknown as Record<string, unknown>;
        const fn = path
          .split('.')
          .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], caller) as (
          input: unknown,
        ) => Promise<unknown>;
        const source = takesBody ? (req.body ?? {}) : req.query;
        const hasInput = procedure._def.inputs.length > 0;
        const output = await fn(hasInput ? { ...(source as object), ...req.params } : undefined);
        options.beforeSend?.(res, ctx, output);
        res.setHeader('Cache-Control', meta?.rest?.cacheControl?.(output) ?? options.defaultCacheControl);
        res.status(meta?.rest?.status ?? 200).json(output);
      } catch (e) {
        options.sendError(res, e);
      }
    });
  }
  return express;
}
