import type { AnyProcedure, AnyRouter } from '@trpc/server';
import { type Request, type Response, Router } from 'express';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { CatalogDeps } from '../catalog';
import { createContext } from './context';
import { sendError } from './errors';
import type { RestMeta } from './trpc';

type Meta = OpenApiMeta<RestMeta>;

/**
 * Serves every procedure that has `meta.openapi` at its REST path through `router.createCaller`, so REST and
 * tRPC run the same procedure and the same domain code; trpc-to-openapi generates the OpenAPI document from
 * the same metadata (`openapi.ts`). Input: path params plus query string (GET, DELETE) or JSON body (POST,
 * PATCH, PUT). Errors: `{message, code, fields?}` with the error table's status. A search's timing goes
 * out as `Server-Timing`.
 */
export function restRouter(appRouter: AnyRouter, deps: CatalogDeps): Router {
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
        const output = await fn({ ...(source as object), ...req.params });
        if (ctx.timing.total > 0) {
          const t = ctx.timing;
          res.setHeader(
            'Server-Timing',
            `rank;dur=${t.rank.toFixed(1)}, city;dur=${t.city.toFixed(1)}, values;dur=${t.values.toFixed(1)}, total;dur=${t.total.toFixed(1)}`,
          );
        }
        res.setHeader('Cache-Control', 'no-store');
        res.status(meta?.rest?.status ?? 200).json(output);
      } catch (e) {
        sendError(res, e);
      }
    });
  }
  return express;
}
