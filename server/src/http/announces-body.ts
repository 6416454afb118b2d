import type { IncomingHttpHeaders } from 'node:http';

/**
 * Whether a request's headers announce a body: a `Content-Length` above 0 or any `Transfer-Encoding`
 * (RFC 9112 section 6.3). A request without either has no body.
 */
export function announcesBody(headers: IncomingHttpHeaders): boolean {
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
}
