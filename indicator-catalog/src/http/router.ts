import { get } from './procedures/providers/get';
import { list } from './procedures/providers/list';
import { register } from './procedures/providers/register';
import { remove } from './procedures/providers/remove';
import { update } from './procedures/providers/update';
import { search } from './procedures/search/search';
import { status } from './procedures/sync/status';
import { trigger } from './procedures/sync/trigger';
import { createCallerFactory, router } from './trpc';

/** The catalog's typed API (`import type { CatalogRouter }`); REST paths come from the same procedures. */
export const catalogRouter = router({
  providers: router({ register, list, get, update, remove }),
  sync: router({ trigger, status }),
  search: router({ search }),
});

export type CatalogRouter = typeof catalogRouter;

/** Calls the catalog's procedures without HTTP, over a context of `createInnerContext` (tRPC's server-side calls). */
export const createCaller = createCallerFactory(catalogRouter);
