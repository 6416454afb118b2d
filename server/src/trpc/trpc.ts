import { ERROR_TABLE } from '@notary/shared';
import { initTRPC, TRPCError } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { isAppError } from '../domain/errors';
import type { Actor } from '../domain/tenancy/actor';
import { authenticate } from '../domain/tenancy/authenticate';
import type { Context } from './context';

/** Extra metadata read by the REST binder (`http/rest.ts`). */
export interface RestMeta {
  rest?: {
    /** Success status (default 200). */
    status?: number;
    /** `Cache-Control` of a successful response, computed from the output. */
    cacheControl?: (output: unknown) => string;
  };
}

const t = initTRPC
  .context<Context>()
  .meta<OpenApiMeta<RestMeta>>()
  .create({
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
const errorMapping = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && isAppError(result.error.cause)) {
    const app = result.error.cause;
    throw new TRPCError({ code: ERROR_TABLE[app.code].trpc, message: app.message, cause: app });
  }
  return result;
});

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
