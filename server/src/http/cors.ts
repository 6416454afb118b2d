import { AppError } from '@notary/shared';
import cors from 'cors';
import type { RequestHandler } from 'express';
import { sendError } from '../trpc/errors';

/**
 * CORS (spec, Authentication: item 7): a browser origin must be listed in `ALLOWED_ORIGINS`; requests without an
 * Origin header (CLI, desktop main process, server to server) always pass, answered with `Vary: Origin` and no
 * other CORS header. A foreign origin gets 403.
 */
export function corsPolicy(
  allowedOrigins: readonly string[],
  selfOrigin: () => string | undefined,
): RequestHandler {
  const allowed = new Set(allowedOrigins);
  // `selfOrigin` may name a URL with a path (PUBLIC_URL behind a proxy): compare origins only.
  const originOf = (url: string | undefined): string | undefined => {
    try {
      return url ? new URL(url).origin : undefined;
    } catch {
      return undefined;
    }
  };
  const handler = cors({
    origin: true,
    credentials: true,
    // X-Request-Id (`requestLogging`): a browser client can quote it when reporting an error.
    exposedHeaders: [
      'X-Service-Signed',
      'X-Signature-Level',
      'X-Notary-Signed',
      'X-Pdfa',
      'Content-Disposition',
      'X-Request-Id',
      'X-Serial-Number',
    ],
    maxAge: 600,
  });
  return (req, res, next) => {
    const origin = req.headers.origin;
    // No Origin (a CLI, a server, the desktop's main process): not a CORS request, so no CORS header means
    // anything to the client; caches still learn that the answer depends on Origin. Preflights keep the library.
    if (!origin && req.method !== 'OPTIONS') {
      // What `res.vary` writes when no earlier stage set `Vary`, without its parse of the header.
      if (res.getHeader('Vary')) res.vary('Origin');
      else res.setHeader('Vary', 'Origin');
      next();
      return;
    }
    if (!origin || allowed.has(origin) || origin === originOf(selfOrigin())) return handler(req, res, next);
    sendError(res, new AppError('FORBIDDEN', `Origin ${origin} is not allowed (ALLOWED_ORIGINS)`));
  };
}
