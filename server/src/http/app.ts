import type { Server } from 'node:http';
import { type RequestObserver, requestLogging } from '@notary/platform/http/request-log';
import { restRouter } from '@notary/platform/http/rest';
import { AppError, TRPC_MAX_BATCH_SIZE } from '@notary/shared';
import { createExpressMiddleware } from '@trpc/server/adapters/express';
import express, { type Express, type RequestHandler } from 'express';
import type { AppDeps } from '../deps';
import { createContext } from '../trpc/context';
import { errorHandler, sendError, toAppError } from '../trpc/errors';
import { appRouter } from '../trpc/router';
import { PUBLIC_VERIFY_PATH } from '../trpc/routers/public/verify';
import { bodyDeadline, type LongBodyRoute } from './body-deadline';
import {
  ataReadRoute,
  ataRequestRoute,
  certificateRoute,
  publicCertificateRoute,
  timestampRoute,
} from './certificates';
import { corsPolicy } from './cors';
import { countGlobalOnArrival } from './count-on-arrival';
import { IDENTITY_WEBHOOK_PATH, identityWebhookRoute } from './identity-webhook';
import { rejectNulBytes } from './input';
import { certidaoRoute } from './monitors';
import { buildOpenApiDocument } from './openapi';
import { publicVerifyLane, publicVerifyRoute } from './public-verify';
import { rateLimited } from './rate-limit';
import { publicRoute } from './route';
import { transparencyLogRouter } from './transparency-log';
import { uploadRoute } from './upload';
import { PUBLIC_SERIAL_PATH, validarCors, validarRoute } from './validar';
import { verifierRouter } from './verifier-files';
import { webClientRouter } from './web-client';
import { witnessRouter } from './witness';

/** The one route whose body may take the whole request timeout to arrive: a 250 MB upload on a slow line. */
const UPLOAD_ROUTE: LongBodyRoute = { method: 'POST', path: '/api/documents/upload' };

/** How long the HTTP server waits on its clients (`HTTP_KEEP_ALIVE_SECONDS`, `HTTP_REQUEST_TIMEOUT_SECONDS`). */
export interface HttpTimeouts {
  /** Idle seconds a kept-alive connection is held open after an answer (default 65). */
  keepAliveSeconds: number;
  /** Seconds a whole request, body included, may take to arrive (default 1800: a 250 MB upload at 1.2 Mbit/s). */
  requestTimeoutSeconds: number;
}

/**
 * Sets the timeouts of the service's HTTP server, in this one place, for clients and load balancers:
 * - `keepAliveTimeout`: an idle kept-alive connection stays open this long (Node's default is 5 s). Clients
 *   and proxies that pool connections close theirs after their own idle time (AWS ALB 60 s, nginx upstream
 *   keepalive 60 s; Node's fetch follows the `Keep-Alive: timeout=` hint less a second or two): the server
 *   must be the last to close, or a request sent on a connection it is closing at that instant is lost (the
 *   client sees a reset). With Node's 5 s, an event loop busy for a few seconds, or a client that reused a
 *   connection after 4.9 s, met exactly that.
 * - `headersTimeout`: a request's headers must arrive within it; longer than the keep-alive time, as load
 *   balancers expect of their targets (a pooled connection is never cut by this timer first).
 * - `requestTimeout`: the whole request, body included; long enough for the largest upload (250 MB) on a
 *   slow line. A client that stops sending is cut off then (408). Every other route's body has the much
 *   shorter `HTTP_BODY_TIMEOUT_SECONDS` (`bodyDeadline`, in `createHttpApp`).
 */
export function applyHttpTimeouts(server: Server, timeouts: HttpTimeouts): void {
  server.keepAliveTimeout = timeouts.keepAliveSeconds * 1000;
  server.headersTimeout = (timeouts.keepAliveSeconds + 1) * 1000;
  server.requestTimeout = Math.max(timeouts.requestTimeoutSeconds, timeouts.keepAliveSeconds + 1) * 1000;
}

export interface HttpOptions {
  /** The identity provider's own routes, mounted at `/api/auth` (better-auth in-process). */
  authHandler?: RequestHandler;
  /** Serves HMAC-signed file URLs at `/files/*` (file storage adapter only). */
  filesRouter?: express.Router | RequestHandler;
  /** Base URL for links in the OpenAPI document; defaults to the request's own origin. */
  publicUrl: () => string;
  /** Told of every completed request (the metrics, when `METRICS_PORT` is set). */
  observeRequest?: RequestObserver;
}

/**
 * The HTTP face of the service: the spec's REST paths, tRPC at `/trpc` for the desktop client, OpenAPI 3.1
 * at `/api/openapi.json`, the identity provider at `/api/auth/*`, signed file URLs at `/files/*`, the web
 * client (the desktop UI in a browser) at `/app/`, the verifier that works without the service (the page
 * and the one-file command line) at `/verify/`.
 */
export function createHttpApp(deps: AppDeps, options: HttpOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', deps.config.trustProxy);
  app.set('etag', false);
  const logging = requestLogging(deps.log, options.observeRequest);
  const securityHeaders: RequestHandler = (_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'no-referrer');
    next();
  };
  const cors = corsPolicy(deps.config.allowedOrigins, () => deps.publicUrl);
  const publicVerify = publicVerifyRoute(deps);
  // Before everything: a body that trickles in holds a connection only as long as its route allows.
  app.use(bodyDeadline(deps.config.http.bodyTimeoutSeconds, [UPLOAD_ROUTE]));
  // The busiest public route (public-verify.ts): its GET runs the same stages as below, in the same
  // order, without the router walking the layers in between.
  app.use(
    publicVerifyLane(PUBLIC_VERIFY_PATH, [logging, securityHeaders, cors, rejectNulBytes, publicVerify]),
  );
  // First: every answer, errors and the web client's included, carries the request id (`X-Request-Id`).
  app.use(logging);
  app.use(securityHeaders);
  // The web client (desktop UI in a browser) at /app/, before CORS: see web-client.ts.
  app.use('/app', webClientRouter());
  // The verifier that works without this service (page and one-file CLI) at /verify/: see verifier-files.ts.
  app.use('/verify', verifierRouter());
  // ITI's VALIDAR reading the certificate's QR code (other calls of that path go on to the service's CORS
  // policy and the REST router), and where it downloads the certificate: VALIDAR's origin allowed too.
  app.get(PUBLIC_SERIAL_PATH, rejectNulBytes, validarRoute(deps));
  app.get(
    `${PUBLIC_SERIAL_PATH}/certificate`,
    rejectNulBytes,
    validarCors(deps),
    rateLimited(deps, ['global', 'publicVerify']),
    publicCertificateRoute(deps),
  );
  // The transparency log's checkpoint and tiles, readable from any origin (transparency-log.ts).
  app.use('/log', rejectNulBytes, transparencyLogRouter(deps));
  // The witness API for other notaries' logs (witness.ts), when WITNESS_LOGS names any.
  if (deps.witness) app.use('/witness', rejectNulBytes, witnessRouter(deps));
  // The service's own origin (PUBLIC_URL, or the computed one) is always allowed: the web client at /app/.
  app.use(cors);
  // The busiest public route, ahead of the routes and parsers it does not use (public-verify.ts).
  app.get(PUBLIC_VERIFY_PATH, rejectNulBytes, publicVerify);

  // Before any body parser: these read the raw request themselves.
  // The identity provider's routes count against the global limit like every other call (better-auth's own
  // limiter is off); its sign-in and sign-up budgets are counted inside it (auth-limits.ts).
  if (options.authHandler) app.all('/api/auth/{*rest}', rateLimited(deps, ['global']), options.authHandler);
  if (options.filesRouter) app.use('/files', options.filesRouter);
  // Limits are counted before anything else is done for the request (spec, Limits).
  app.post(UPLOAD_ROUTE.path, rateLimited(deps, ['global', 'upload']), uploadRoute(deps));
  app.post(IDENTITY_WEBHOOK_PATH, identityWebhookRoute(deps));
  app.get('/api/documents/:id/certificate', rateLimited(deps, ['global']), certificateRoute(deps));
  app.post('/api/documents/:id/timestamp', rateLimited(deps, ['global', 'timestamp']), timestampRoute(deps));
  app.get('/api/monitors/:id/certidao', rateLimited(deps, ['global']), certidaoRoute(deps));

  // The global limit is counted before the body parser reads a byte: a caller over it is refused at once.
  app.use(countGlobalOnArrival(deps));
  app.use(express.json({ limit: '256kb' }));
  app.use(rejectNulBytes);
  // The ata notarial draft of a web capture: a JSON body in, a PDF out (certificates.ts). The POST's global count was
  // taken on arrival (it announces a body); the GET is counted here.
  app.post('/api/documents/:id/ata', ataRequestRoute(deps));
  app.get('/api/documents/:id/ata', rateLimited(deps, ['global']), ataReadRoute(deps));

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
          req.log.error({ err: error.cause ?? error }, 'internal error in a tRPC call');
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
