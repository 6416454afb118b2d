import type { SqlEntityManager } from '@mikro-orm/sql';
import { bearerFrom, lazyEntityManager } from '@notary/platform/trpc/context';
import type { CatalogDeps } from '../catalog';
import type { SearchTiming } from '../search/search';
import type { AdminAccess } from './admin-access';

/** Per-request context of every procedure, for both faces (tRPC at `/trpc`, REST at `/api/...`). */
export interface Context {
  deps: CatalogDeps;
  /** This request's own EntityManager, forked on first use. */
  em: () => SqlEntityManager;
  /** Raw bearer token of `Authorization`, checked by `adminProcedure`. */
  bearer: string | null;
  /** Who may use the admin routes on this listen (`adminAccessFor`, decided at start). */
  admin: AdminAccess;
  /** Filled by the search; the REST face sends it as `Server-Timing`. */
  timing: SearchTiming;
}

/**
 * The context of one call without HTTP (tRPC's "inner context"): what `createContext` builds from a request,
 * and what a server-side caller (`createCaller`, the procedure tests) is given directly. `bearer` is the token
 * without its `Bearer ` scheme (none: anonymous).
 */
export function createInnerContext(
  deps: CatalogDeps,
  admin: AdminAccess,
  origin: { bearer?: string | null } = {},
): Context {
  return {
    deps,
    em: lazyEntityManager(deps.db),
    bearer: origin.bearer ?? null,
    admin,
    timing: { rank: 0, city: 0, values: 0, total: 0 },
  };
}

/**
 * The context of one request (REST or tRPC): its own EntityManager (lazily forked), bearer token (RFC 6750
 * section 2.1), the listen's admin access, timing.
 */
export function createContext(
  deps: CatalogDeps,
  req: { headers: { authorization?: string | undefined } },
  admin: AdminAccess,
): Context {
  return createInnerContext(deps, admin, { bearer: bearerFrom(req.headers.authorization) });
}
