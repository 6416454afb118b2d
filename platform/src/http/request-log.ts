import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import type { Level } from 'pino';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../log';

/** The request id header: read from the client (when safe), always set on the answer. */
export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * A client-sent request id is kept only when it is this: short, and nothing a log reader or a header could
 * misread (no spaces, quotes, control characters or line breaks).
 */
export const SAFE_REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * The id of a request: the client's `X-Request-Id` when it matches `SAFE_REQUEST_ID` (a proxy or a client
 * that already named the request), else a fresh UUID v4.
 */
export function requestIdFor(req: IncomingMessage): string {
  const sent = req.headers[REQUEST_ID_HEADER];
  return typeof sent === 'string' && SAFE_REQUEST_ID.test(sent) ? sent : randomUUID();
}

/**
 * A request's URL as it may be logged: without its query string (signed file URLs carry their signature there,
 * the acervo feed its token) and with the bearer segment of a share link (`/share/<token>`) masked.
 */
export function loggableUrl(url: string): string {
  const path = url.split('?', 1)[0] ?? '';
  return path.replace(/^(\/share\/)[^/]+/, '$1[redacted]') + (path.length < url.length ? '?[redacted]' : '');
}

/** The message of the Error pino-http makes up for a 5xx answer. */
const MADE_UP_ERROR = /^failed with status code \d+$/;

/**
 * pino-http on an Express app, first in line: each request gets an id (`requestIdFor`), echoed in the
 * `X-Request-Id` response header (so error answers carry it too) and bound as `reqId` to `req.log`, the
 * logger the request's own code logs through; one line per completed request (`GET /path 200`, with the
 * request and response, their secrets redacted: `REDACTED_PATHS`) at info, at error for a 5xx.
 */
export function requestLogging(log: Logger): RequestHandler {
  const middleware = pinoHttp<Request, Response>({
    logger: log.child({ module: 'http' }),
    genReqId: (req, res) => {
      const id = requestIdFor(req);
      res.setHeader(REQUEST_ID_HEADER, id);
      return id;
    },
    // `req.log` carries the id only; the request itself is logged once, on the completion line.
    quietReqLogger: true,
    customLogLevel: (_req, res, error): Level => (error || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessMessage: (req, res) => `${req.method} ${loggableUrl(req.originalUrl)} ${res.statusCode}`,
    customErrorMessage: (req, res) => `${req.method} ${loggableUrl(req.originalUrl)} ${res.statusCode}`,
    // Secrets travel in some URLs: the logged request keeps the path only (see `loggableUrl`).
    serializers: {
      req: (req: { url?: string; query?: unknown } & Record<string, unknown>) => {
        const { query: _query, ...rest } = req;
        return { ...rest, url: loggableUrl(String(req.url ?? '')) };
      },
    },
    // For a 5xx without an error of its own pino-http makes one up, whose stack says nothing: the cause is
    // on the error mapping's line, which has the same reqId.
    customErrorObject: (_req, _res, error, val: Record<string, unknown>) => {
      if (!MADE_UP_ERROR.test(error.message)) return val;
      const { err: _madeUp, ...rest } = val;
      return rest;
    },
  });
  return (req, res, next) => middleware(req, res, next);
}
