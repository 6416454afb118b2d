/**
 * The Node/Express handler of `/api/auth/*`: refuses the organization and password endpoints the service does
 * not serve (404 with the service's error body), hands Express's `req.ip` to the sign-in budgets
 * (`auth-limits.ts`) and better-auth through a header of its own, and lets requests without `Origin` pass like
 * curl's (see the comments), before better-auth's own handler.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from 'better-auth/node';
import { type BetterAuthInstance, CLIENT_IP_HEADER } from './options';
import { blockedOrganizationBody, blockedOrganizationPath } from './organization-guard';
import { passwordPath, passwordPathBody } from './passwords';

/**
 * The handler for every `/api/auth/*` request on the instance `getAuth` returns (created on first use).
 * Mount it before any body parser: better-auth reads the raw request.
 */
export function createAuthHandler(
  getAuth: () => BetterAuthInstance,
): (req: IncomingMessage & { ip?: string; originalUrl?: string }, res: ServerResponse) => Promise<void> {
  let nodeHandler: ReturnType<typeof toNodeHandler> | undefined;
  return async (
    req: IncomingMessage & { ip?: string; originalUrl?: string },
    res: ServerResponse,
  ): Promise<void> => {
    // The organization plugin's endpoints outside the allowed few: refused before better-auth sees them (its
    // `hooks.before` refuses them again, by the routed endpoint's own path).
    const url = req.originalUrl ?? req.url ?? '/';
    const blocked = blockedOrganizationPath(url, '/api/auth');
    // Password endpoints: the service has none (better-auth's `disabledPaths` refuses them again, wordlessly).
    const password = blocked === null ? passwordPath(url, '/api/auth') : null;
    if (blocked !== null || password !== null) {
      const refusal = blocked !== null ? blockedOrganizationBody(blocked) : passwordPathBody(password ?? '');
      const body = JSON.stringify(refusal);
      res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    const ip = req.ip ?? req.socket.remoteAddress;
    if (ip) req.headers[CLIENT_IP_HEADER] = ip;
    else delete req.headers[CLIENT_IP_HEADER];
    if (req.headers.origin === undefined && req.headers.referer === undefined) {
      // better-auth 1.7.7 treats any Sec-Fetch-* header as "a browser" and then demands an Origin, which
      // rejects Node's fetch (it sends `Sec-Fetch-Mode: cors` and no Origin) on the code-request route.
      // Browsers that send Sec-Fetch-* always send Origin on POST, so without one this is not a browser:
      // it passes like curl does (spec, Authentication: item 7, requests without an Origin header always pass).
      for (const name of ['sec-fetch-site', 'sec-fetch-mode', 'sec-fetch-dest', 'sec-fetch-user']) {
        delete req.headers[name];
      }
    }
    nodeHandler ??= toNodeHandler(getAuth());
    return nodeHandler(req, res);
  };
}
