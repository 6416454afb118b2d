import { requestLogging } from '@notary/platform/http/request-log';
import { restRouter } from '@notary/platform/http/rest';
import { AppError, TRPC_MAX_BATCH_SIZE } from '@notary/shared';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import express, { type Express, type RequestHandler } from 'express';
import type { AppDeps } from '../deps';
import { createContext } from '../trpc/context';
import { appRouter } from '../trpc/router';
import { PUBLIC_VERIFY_PATH } from '../trpc/routers/public/verify';
import { certificateRoute, timestampRoute } from './certificates';
import { corsPolicy } from './cors';
import { errorHandler, sendError, toAppError } from './errors';
import { IDENTITY_WEBHOOK_PATH, identityWebhookRoute } from './identity-webhook';
import { rejectNulBytes } from './input';
import { buildOpenApiDocument } from './openapi';
import { publicVerifyRoute } from './public-verify';
import { rateLimited } from './rate-limit';
import { publicRoute } from './route';
import { uploadRoute } from './upload';
import { webClientRouter } from './web-client';

export interface HttpOptions {
  /** The identity provider's own routes, mounted at `/api/auth` (better-auth in-process). */
  authHandler?: RequestHandler;
  /** Serves HMAC-signed file URLs at `/files/*` (file storage adapter only). */
  filesRouter?: express.Router | RequestHandler;
  /** Base URL for links in the OpenAPI document; defaults to the request's own origin. */
  publicUrl: () => string;
}

/**
 * The HTTP face of the service: the spec's REST paths, tRPC at `/trpc` for the desktop client, OpenAPI 3.1
 * at `/api/openapi.json`, the identity provider at `/api/auth/*`, signed file URLs at `/files/*`, the web
 * client (the desktop UI in a browser) at `/app/`.
 */
export function createHttpApp(deps: AppDeps, options: HttpOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.trustProxy);
  app.set('etag', false);
  // First: every answer, errors and the web client's included, carries the request id (`X-Request-Id`).
  app.use(requestLogging(deps.log));
  app.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  });
  // The web client (desktop UI in a browser) at /app/, before CORS: see web-client.ts.
  app.use('/app', webClientRouter());
  // The service's own origin (PUBLIC_URL, or the computed one) is always allowed: the web client at /app/.
  app.use(corsPolicy(deps.config.allowedOrigins, () => deps.publicUrl));
  // The busiest public route, ahead of the routes and parsers it does not use (issue 17: public-verify.ts).
  app.get(PUBLIC_VERIFY_PATH, rejectNulBytes, publicVerifyRoute(deps));

  // Before any body parser: these read the raw request themselves.
  // The identity provider's routes count against the global limit like every other call (better-auth's own
  // limiter is off); its sign-in and sign-up budgets are counted inside it (auth-limits.ts).
  if (options.authHandler) app.all('/api/auth/{*rest}', rateLimited(deps, ['global']), options.authHandler);
  if (options.filesRouter) app.use('/files', options.filesRouter);
  // Limits are counted before anything else is done for the request (spec, Limits).
  app.post('/api/documents/upload', rateLimited(deps, ['global', 'upload']), uploadRoute(deps));
  app.post(IDENTITY_WEBHOOK_PATH, identityWebhookRoute(deps));
  app.get('/api/documents/:id/certificate', rateLimited(deps, ['global']), certificateRoute(deps));
  app.post('/api/documents/:id/timestamp', rateLimited(deps, ['global', 'timestamp']), timestampRoute(deps));

  app.use(express.json({ limit: '256kb' }));
  app.use(rejectNulBytes);

  let openapi: unknown;
  app.get(
    '/api/openapi.json',
    publicRoute(async ({ res }) => {
      openapi ??= buildOpenApiDocument(appRouter, options.publicUrl());
      res.json(openapi);
    }),
  );
  app.use(
    '/trpc',
    createExpressMiddleware({
      router: appRouter,
      createContext: ({ req, res }) => createContext(deps, req, res),
      // Each call of a batch counts against the limits; a batch over the maximum is refused whole (400).
      maxBatchSize: TRPC_MAX_BATCH_SIZE,
      onError: ({ error, req }) => {
        // A call whose client hung up fails with the abort that caused: nobody's fault, nobody to tell.
        if (error.cause instanceof Error && error.cause.name === 'AbortError' && req.socket.destroyed) return;
        if (toAppError(error).code === 'INTERNAL')
          req.log.error({ err: error.cause ?? error }, '[trpc] internal error');
      },
    }),
  );
  app.use(
    restRouter(appRouter, (req, res) => createContext(deps, req, res), {
      sendError,
      defaultCacheControl: 'private, no-store',
    }),
  );

  app.use((req, res) => sendError(res, new AppError('NOT_FOUND', `No route for ${req.method} ${req.path}`)));
  app.use(errorHandler);
  return app;
}
