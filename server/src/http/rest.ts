import type { AnyProcedure, AnyRouter } from '@trpc/server';
import { type Request, type Response, Router } from 'express';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { AppDeps } from '../deps';
import { createContext } from '../trpc/context';
import type { RestMeta } from '../trpc/trpc';
import { sendError } from './errors';

type Meta = OpenApiMeta<RestMeta>;

/**
 * Serves every procedure that has `meta.openapi` at its REST path (the spec's public face), through
 * `router.createCaller`, so REST and tRPC run the same procedure and the same domain code.
 * trpc-to-openapi generates the OpenAPI document from the same metadata (`openapi.ts`); this binder exists
 * because the spec's error statuses (410, 502, 503) and cache headers do not fit its HTTP handler.
 * Input: path params plus query string (GET, DELETE) or JSON body (POST, PATCH, PUT).
 */
export function restRouter(appRouter: AnyRouter, deps: AppDeps): Router {
  const express = Router();
  const procedures = appRouter._def.procedures as Record<string, AnyProcedure>;
  for (const [path, procedure] of Object.entries(procedures)) {
    const meta = procedure._def.meta as Meta | undefined;
    const openapi = meta?.openapi;
    if (!openapi || openapi.enabled === false) continue;
    const route = openapi.path.replace(/\{(\w+)\}/g, ':$1');
    const method = openapi.method.toLowerCase() as 'get' | 'post' | 'patch' | 'put' | 'delete';
    const takesBody = method === 'post' || method === 'patch' || method === 'put';
    express[method](route, async (req: Request, res: Response) => {
      try {
        const ctx = createContext(deps, req);
        const caller = appRouter.createCaller(ctx) as unknown as Record<string, unknown>;
        const fn = path
          .split('.')
          .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], caller) as (
          input: unknown,
        ) => Promise<unknown>;
        const source = takesBody ? (req.body ?? {}) : req.query;
        const hasInput = procedure._def.inputs.length > 0;
        const output = await fn(hasInput ? { ...(source as object), ...req.params } : undefined);
        const cacheControl = meta?.rest?.cacheControl?.(output) ?? 'private, no-store';
        res.setHeader('Cache-Control', cacheControl);
        res.status(meta?.rest?.status ?? 200).json(output);
      } catch (e) {
        sendError(res, e);
      }
    });
  }
  return express;
}
