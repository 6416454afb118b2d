import { createHash, timingSafeEqual } from 'node:crypto';
import { isLoopbackHost } from '@notary/shared';

/**
 * Who may call the catalog's admin routes (register, update, remove providers; trigger syncs), decided once at start
 * from the configuration and the listen address, so that a fresh start is never open to the network:
 * - `token`: `CATALOG_ADMIN_TOKEN` is set; every admin call needs `Authorization: Bearer <token>`.
 * - `open`: no token, `CATALOG_ADMIN_OPEN=1`, and the catalog listens on loopback only.
 * - `closed`: no token and not open: every admin call is refused (401).
 */
export type AdminAccess = { mode: 'token'; token: string } | { mode: 'open' } | { mode: 'closed' };

/**
 * The admin access of a catalog listening on `listenHost`.
 * @throws Error (the catalog must not start) when it listens beyond loopback without `CATALOG_ADMIN_TOKEN`.
 */
export function adminAccessFor(
  config: { adminToken: string | undefined; adminOpen: boolean },
  listenHost: string,
): AdminAccess {
  if (config.adminToken !== undefined) return { mode: 'token', token: config.adminToken };
  if (!isLoopbackHost(listenHost)) {
    throw new Error(
      `The catalog listens on ${listenHost}, beyond loopback, without CATALOG_ADMIN_TOKEN: set CATALOG_ADMIN_TOKEN (at least 16 characters) or listen on 127.0.0.1 (CATALOG_HOST)` +
        (config.adminOpen ? '; CATALOG_ADMIN_OPEN=1 is honoured on loopback only' : ''),
    );
  }
  return config.adminOpen ? { mode: 'open' } : { mode: 'closed' };
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * Whether `bearer` may use the admin routes. Tokens are compared as SHA-256 digests with `timingSafeEqual`,
 * so neither the content nor the length of the configured token shows in the timing.
 */
export function adminAllowed(access: AdminAccess, bearer: string | null): boolean {
  if (access.mode === 'open') return true;
  if (access.mode === 'closed' || bearer === null) return false;
  return timingSafeEqual(digest(bearer), digest(access.token));
}
