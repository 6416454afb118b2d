import type { IncomingHttpHeaders } from 'node:http';
import { isLoopbackHost } from '@notary/shared';

/**
 * Headers a reverse proxy, load balancer or CDN adds to a request it forwards (RFC 7239 `Forwarded`, RFC 9110
 * `Via`, the de facto `X-Forwarded-*` family and the single-address variants of common proxies and CDNs).
 */
const FORWARDING_HEADERS = [
  'forwarded',
  'via',
  'x-real-ip',
  'x-client-ip',
  'x-cluster-client-ip',
  'true-client-ip',
  'cf-connecting-ip',
  'fastly-client-ip',
];

/** True for an IPv4 loopback (127.0.0.0/8), `::1`, or an IPv4-mapped loopback (`::ffff:127.x.y.z`). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  const a = address.toLowerCase();
  return a === '::1' || /^127\.\d+\.\d+\.\d+$/.test(a) || /^::ffff:127\.\d+\.\d+\.\d+$/.test(a);
}

/** True when `headers` hold any header a proxy adds when forwarding (`FORWARDING_HEADERS`, any `x-forwarded-*`). */
export function hasForwardingHeaders(headers: IncomingHttpHeaders): boolean {
  return Object.keys(headers).some(
    (name) => name.startsWith('x-forwarded-') || FORWARDING_HEADERS.includes(name),
  );
}

/**
 * True when a request was made on this machine by its user directly: the TCP peer (`socket.remoteAddress`,
 * never `req.ip`, which `TRUST_PROXY` lets a proxy set) is a loopback address and no proxy header is present.
 * Development conveniences (the e-mail access answer's `token`) are served only to such requests: a
 * reverse proxy on the same host connects from loopback too, but announces itself with `Forwarded`,
 * `X-Forwarded-*` or `Via`, and a request from anywhere else is never local, whatever `NODE_ENV` says.
 */
export function isDirectLoopbackRequest(req: {
  headers: IncomingHttpHeaders;
  socket?: { remoteAddress?: string | undefined } | undefined;
}): boolean {
  return isLoopbackAddress(req.socket?.remoteAddress) && !hasForwardingHeaders(req.headers);
}

/**
 * Whether a development convenience may be served to a request: `NODE_ENV=development` (`env`), the service's
 * public address on this machine (`publicUrl` on a loopback host: a service announced under another name is
 * reached through something in front of it, which need not add a forwarding header, as nginx's default
 * `proxy_pass` does not) and the request made directly from loopback (`directLoopback`,
 * `isDirectLoopbackRequest`).
 */
export function servesDevelopmentConveniences(
  env: string,
  publicUrl: string,
  directLoopback: boolean,
): boolean {
  if (env !== 'development' || !directLoopback) return false;
  try {
    return isLoopbackHost(new URL(publicUrl).hostname);
  } catch {
    return false;
  }
}
