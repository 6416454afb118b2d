import { restRouter as bindRest } from '@notary/platform/http/rest';
import type { AnyRouter } from '@trpc/server';
import type { Router } from 'express';
import type { CatalogDeps } from '../catalog';
import type { AdminAccess } from './admin-access';
import { createContext } from './context';
import { sendError } from './errors';

/**
 * The catalog's REST face: every procedure with `meta.openapi` at its path (`@notary/platform` `restRouter`),
 * never cached (`no-store`); errors `{message, code, fields?}` with the error table's status. A search's timing
 * goes out as `Server-Timing` (rank, city, values, total, in ms).
 */
export function restRouter(appRouter: AnyRouter, deps: CatalogDeps, admin: AdminAccess): Router {
  return bindRest(appRouter, (req) => createContext(deps, req, admin), {
    sendError,
    defaultCacheControl: 'no-store',
    beforeSend: (res, ctx) => {
      const t = ctx.timing;
      if (t.total > 0) {
        res.setHeader(
          'Server-Timing',
          `rank;dur=${t.rank.toFixed(1)}, city;dur=${t.city.toFixed(1)}, values;dur=${t.values.toFixed(1)}, total;dur=${t.total.toFixed(1)}`,
        );
      }
    },
  });
}
