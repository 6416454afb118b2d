import os from 'node:os';
import { AppError, isLoopbackHost } from '@notary/shared';
import type { RequestHandler } from 'express';
import { sendError } from './errors';

const WILDCARD = new Set(['0.0.0.0', '::', '[::]', '']);
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

/**
 * The host name of a `Host` header (RFC 9110 section 7.2: `uri-host [":" port]`), lower-case, without the
 * port, brackets or a trailing dot; undefined when the header is missing or malformed.
 */
export function hostNameOf(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::\d{1,5})?$/i.exec(header.trim());
  if (!match?.[1]) return undefined;
  return match[1]
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
}

/**
 * The host names the catalog answers to: `CATALOG_ALLOWED_HOSTS`, the host of `CATALOG_PUBLIC_URL`, and the
 * listen address's own forms: on loopback `localhost`, `127.0.0.1`, `::1`; on a wildcard address (`0.0.0.0`,
 * `::`) those plus this machine's interface addresses and host name; else the listen host itself.
 */
export function allowedHostNames(
  config: { publicUrl: string | undefined; allowedHosts: readonly string[] },
  listenHost: string,
): Set<string> {
  const names = new Set<string>();
  const add = (h: string | undefined) => {
    const name = hostNameOf(h);
    if (name) names.add(name);
  };
  for (const h of config.allowedHosts) add(h);
  if (config.publicUrl) add(new URL(config.publicUrl).host);
  const listen = listenHost.toLowerCase();
  if (WILDCARD.has(listen) || isLoopbackHost(listen)) for (const h of LOOPBACK_NAMES) names.add(h);
  if (WILDCARD.has(listen)) {
    names.add(os.hostname().toLowerCase());
    for (const list of Object.values(os.networkInterfaces())) {
      for (const a of list ?? []) names.add(a.address.toLowerCase().replace(/%.*$/, ''));
    }
  } else {
    names.add(listen.replace(/^\[(.*)\]$/, '$1'));
  }
  return names;
}

/**
 * Express middleware: 400 for a request whose `Host` is not one of `names` (a DNS-rebinding page, or a
 * client that reached the catalog under a name it was not configured for). `GET /health` is exempt:
 * orchestrators' probes use whatever host they see, and it tells nothing.
 */
export function hostCheck(names: ReadonlySet<string>): RequestHandler {
  return (req, res, next) => {
    if (req.path === '/health') return next();
    const name = hostNameOf(req.headers.host);
    if (name !== undefined && names.has(name)) return next();
    sendError(
      res,
      new AppError(
        'BAD_REQUEST',
        'Unknown Host: this catalog answers only to its configured host names (CATALOG_PUBLIC_URL, CATALOG_ALLOWED_HOSTS)',
      ),
    );
  };
}
