import type { RequestHandler } from 'express';
import { announcesBody } from './announces-body';

/** A route whose body may take the server's whole request timeout to arrive (a large upload on a slow line). */
export interface LongBodyRoute {
  method: string;
  path: string;
}

/**
 * Gives every request's body `seconds` to arrive in full, except on `longBodyRoutes`, which keep the HTTP
 * server's own `requestTimeout` (`HTTP_REQUEST_TIMEOUT_SECONDS`, long enough for a 250 MB upload). A request whose
 * body is still arriving when the time is up is answered 408 with `Connection: close`, no body (as Node's own
 * request timeout answers), and its connection is closed; if its answer had already begun, the connection is
 * closed without one. Without it a client sending a byte now and then holds a connection, and the memory of a
 * half-read body, for the whole request timeout on any route.
 * The timer starts with the request and stops when its body has arrived (`req.complete`, whether or not a
 * route read it) or the connection closed; the body itself is never read here. A request without a body
 * (no `Content-Length` above 0, no `Transfer-Encoding`) starts none. RFC 9110 section 15.5.9 (408).
 */
export function bodyDeadline(seconds: number, longBodyRoutes: readonly LongBodyRoute[]): RequestHandler {
  // Matched as Express routes them: case-insensitive, one trailing slash allowed.
  const longPaths = longBodyRoutes.map((r) => ({ method: r.method, path: r.path.toLowerCase() }));
  const isLong = (method: string, path: string) =>
    longPaths.some((r) => r.method === method && (path === r.path || path === `${r.path}/`));
  return (req, res, next) => {
    // Most requests announce no body: they pass without the route match.
    if (!announcesBody(req.headers) || req.complete || isLong(req.method, req.path.toLowerCase())) {
      next();
      return;
    }
    const expire = () => {
      stop();
      if (req.complete || req.socket.destroyed) return;
      const socket = req.socket;
      if (res.headersSent) {
        socket.destroy();
        return;
      }
      // The answer is written at once; the rest of the body is not waited for, the connection ends with it.
      res.once('finish', () => socket.destroy());
      res.writeHead(408, { Connection: 'close', 'Content-Length': '0' });
      res.end();
    };
    const timer = setTimeout(expire, seconds * 1000).unref();
    const stop = () => {
      clearTimeout(timer);
      req.off('end', stop).off('close', stop);
    };
    req.once('end', stop).once('close', stop);
    next();
  };
}
