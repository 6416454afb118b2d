import { AppError } from '@notary/shared';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import express, { type Express } from 'express';
import type { CatalogDeps } from '../catalog';
import { createContext } from './context';
import { errorHandler, sendError, toAppError } from './errors';
import { buildOpenApiDocument } from './openapi';
import { restRouter } from './rest';
import { catalogRouter } from './router';

/**
 * The catalog's HTTP face: `GET /health`, the REST routes under `/api`, tRPC at `/trpc`, OpenAPI 3.1 at
 * `/api/openapi.json`.
 */
export function createHttpApp(deps: CatalogDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    next();
  });
  app.get('/health', (_req, res) => {
    const r = deps.readiness;
    res.setHeader('Cache-Control', 'no-store');
    if (r.status === 'ok') res.json({ status: 'ok' });
    else res.status(503).json({ status: r.status, ...(r.detail ? { detail: r.detail } : {}) });
  });
  app.use(express.json({ limit: '64kb' }));
  let openapi: unknown;
  app.get('/api/openapi.json', (req, res) => {
    openapi ??= buildOpenApiDocument(
      catalogRouter,
      deps.config.publicUrl ?? `${req.protocol}://${req.get('host')}`,
    );
    res.json(openapi);
  });
  app.use(
    '/trpc',
    createExpressMiddleware({
      router: catalogRouter,
      createContext: ({ req }) => createContext(deps, req),
      onError: ({ error }) => {
        if (toAppError(error).code === 'INTERNAL')
          console.error('[catalog] internal error', error.cause ?? error);
      },
    }),
  );
  app.use(restRouter(catalogRouter, deps));
  app.use((req, res) => sendError(res, new AppError('NOT_FOUND', `No route for ${req.method} ${req.path}`)));
  app.use(errorHandler);
  return app;
}
