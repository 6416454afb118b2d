import { timingSafeEqual } from 'node:crypto';
import { mapAppError } from '@notary/platform/trpc/errors';
import { initTrpc } from '@notary/platform/trpc/init';
import { AppError } from '@notary/shared';
import type { Context } from './context';
import { toAppError } from './errors';

const t = initTrpc<Context>().create({
  // Stacks never leave the process, whatever NODE_ENV says (DEPENDENCIES.md: tRPC leaks them otherwise).
  isDev: false,
  errorFormatter({ shape, error }) {
    const app = toAppError(error);
    return {
      message: app.code === 'INTERNAL' ? 'Internal error' : app.message,
      code: shape.code,
      data: {
        code: app.code,
        httpStatus: app.status,
        path: shape.data.path,
        ...(app.fields ? { fields: app.fields } : {}),
      },
    };
  },
});

/** Turns `AppError`s into `TRPCError`s with the table's tRPC code; the AppError stays as `cause`. */
const errorMapping = t.middleware(async ({ next }) => mapAppError(await next()));

export const router = t.router;
export const publicProcedure = t.procedure.use(errorMapping);

const sameToken = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * Procedures that change the catalog (providers, syncs): when `CATALOG_ADMIN_TOKEN` is set they need
 * `Authorization: Bearer <token>` (401 otherwise); when it is unset they are open.
 */
export const adminProcedure = publicProcedure.use(({ ctx, next }) => {
  const token = ctx.deps.config.adminToken;
  if (token !== undefined && (ctx.bearer === null || !sameToken(ctx.bearer, token))) {
    throw new AppError('UNAUTHENTICATED', 'This route needs the catalog admin token (Authorization: Bearer)');
  }
  return next();
});
