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
 * The context of one request (REST or tRPC): its own EntityManager (lazily forked), bearer token, the
 * listen's admin access, timing.
 */
export function createContext(
  deps: CatalogDeps,
  req: { headers: { authorization?: string | undefined } },
  admin: AdminAccess,
): Context {
  return {
    deps,
    em: lazyEntityManager(deps.db),
    bearer: bearerFrom(req.headers.authorization),
    admin,
    timing: { rank: 0, city: 0, values: 0, total: 0 },
  };
}
