import { mapAppError } from '@notary/platform/trpc/errors';
import { initTrpc } from '@notary/platform/trpc/init';
import { isAppError } from '@notary/shared';
import type { Actor } from '../domain/tenancy/actor';
import { authenticate } from '../domain/tenancy/authenticate';
import type { Context } from './context';

const t = initTrpc<Context>().create({
  // Stacks never leave the process, whatever NODE_ENV says (DEPENDENCIES.md: tRPC leaks them otherwise).
  isDev: false,
  errorFormatter({ shape, error }) {
    const app = isAppError(error.cause) ? error.cause : undefined;
    return {
      message: shape.message,
      code: shape.code,
      data: {
        code: app?.code ?? error.code,
        httpStatus: app?.status ?? shape.data.httpStatus,
        path: shape.data.path,
      },
    };
  },
});

/** Turns domain `AppError`s into `TRPCError`s with the table's tRPC code; the AppError stays as `cause`. */
const errorMapping = t.middleware(async ({ next }) => mapAppError(await next()));

export const router = t.router;
export const publicProcedure = t.procedure.use(errorMapping);

/**
 * Procedures that need a session: verifies `Authorization: Bearer` through the identity port and resolves
 * the tenant and role (spec, Authentication). Adds `actor` to the context.
 */
export const authedProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const actor: Actor = await authenticate(ctx.em(), ctx.deps, ctx.bearer, ctx.ip);
  return next({ ctx: { ...ctx, actor } });
});
