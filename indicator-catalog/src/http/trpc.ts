import { formatTrpcError, mapAppError } from '@notary/platform/trpc/errors';
import { initTrpc } from '@notary/platform/trpc/init';
import { AppError } from '@notary/shared';
import { adminAllowed } from './admin-access';
import type { Context } from './context';
import { toAppError } from './errors';

// Stacks never leave the process, whatever NODE_ENV says (unless `isDev` is false, tRPC puts them into error bodies);
// the platform's formatter masks internal errors on /trpc exactly as the REST face does.
const t = initTrpc<Context>().create({ isDev: false, errorFormatter: formatTrpcError(toAppError) });

/** Turns `AppError`s into `TRPCError`s with the table's tRPC code; the AppError stays as `cause`. */
const errorMapping = t.middleware(async ({ next }) => mapAppError(await next()));

export const router = t.router;
/** Server-side callers of a router (tRPC's `createCallerFactory`): procedures called without HTTP. */
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure.use(errorMapping);

/**
 * Procedures that change the catalog (providers, syncs): they need `Authorization: Bearer
 * <CATALOG_ADMIN_TOKEN>` (compared in constant time), unless the catalog listens on loopback only with
 * `CATALOG_ADMIN_OPEN=1` (`adminAccessFor`); 401 otherwise.
 */
export const adminProcedure = publicProcedure.use(({ ctx, next }) => {
  if (!adminAllowed(ctx.admin, ctx.bearer)) {
    throw new AppError(
      'UNAUTHENTICATED',
      ctx.admin.mode === 'token'
        ? 'This route needs the catalog admin token (Authorization: Bearer)'
        : 'This route needs the catalog admin token: set CATALOG_ADMIN_TOKEN on the catalog and send Authorization: Bearer <token> (a catalog listening on loopback only may set CATALOG_ADMIN_OPEN=1 instead)',
    );
  }
  return next();
});
