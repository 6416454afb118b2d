import { requestLogging } from '@notary/platform/http/request-log';
import { AppError } from '@notary/shared';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import express, { type Express } from 'express';
import type { CatalogDeps } from '../catalog';
import type { AdminAccess } from './admin-access';
import { createContext } from './context';
import { errorHandler, sendError, toAppError } from './errors';
import { hostCheck } from './host-check';
import { buildOpenApiDocument } from './openapi';
import { restRouter } from './rest';
import { catalogRouter } from './router';

/** What the HTTP face knows of its listen, decided once at start (`startHttp`). */
export interface HttpSite {
  /** Who may use the admin routes (`adminAccessFor`). */
  admin: AdminAccess;
  /** Host names a request's `Host` may carry (`allowedHostNames`). */
  hostNames: ReadonlySet<string>;
  /** The OpenAPI `servers` URL: `CATALOG_PUBLIC_URL`, else the listen's own URL; never a request's Host. */
  publicUrl: () => string;
}

/**
 * The catalog's HTTP face: `GET /health`, the REST routes under `/api`, tRPC at `/trpc`, OpenAPI 3.1 at
 * `/api/openapi.json`. Every route but `/health` checks the `Host` header (`hostCheck`).
 */
export function createHttpApp(deps: CatalogDeps, site: HttpSite): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // First: every answer, `/health` and the Host check's 400 included, carries the request id (`X-Request-Id`).
  app.use(requestLogging(deps.log));
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });
  app.use(hostCheck(site.hostNames));
  app.get('/health', (_req, res) => {
    const r = deps.readiness;
    res.setHeader('Cache-Control', 'no-store');
    if (r.status === 'ok') res.json({ status: 'ok' });
    else res.status(503).json({ status: r.status, ...(r.detail ? { detail: r.detail } : {}) });
  });
  app.use(express.json({ limit: '64kb' }));
  let openapi: unknown;
  app.get('/api/openapi.json', (_req, res) => {
    openapi ??= buildOpenApiDocument(catalogRouter, site.publicUrl());
    res.json(openapi);
  });
  app.use(
    '/trpc',
    createExpressMiddleware({
      router: catalogRouter,
      createContext: ({ req }) => createContext(deps, req, site.admin),
      onError: ({ error, req }) => {
        if (toAppError(error).code === 'INTERNAL')
          req.log.error({ err: error.cause ?? error }, 'internal error in a tRPC call');
      },
    }),
  );
  app.use(restRouter(catalogRouter, deps, site.admin));
  app.use((req, res) => sendError(res, new AppError('NOT_FOUND', `No route for ${req.method} ${req.path}`)));
  app.use(errorHandler);
  return app;
}
