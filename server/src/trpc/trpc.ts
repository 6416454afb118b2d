import { formatTrpcError, mapAppError } from '@notary/platform/trpc/errors';
import { initTrpc } from '@notary/platform/trpc/init';
import type { RateLimitName } from '@notary/shared';
import { databaseUnavailable } from '../db/unavailable';
import type { Actor } from '../domain/tenancy/actor';
import { authenticate } from '../domain/tenancy/authenticate';
import type { Context } from './context';
import { toAppError } from './errors';
import { enforceRateLimit } from './rate-limit';

/** The server's own procedure metadata. */
export interface ProcedureMeta {
  /**
   * The procedure's own limit of the spec (Limits), counted on top of `global`; `exempt` for the health probe
   * only (load balancers poll it). Read by the rate limit middleware on both faces.
   */
  rateLimit?: RateLimitName | 'exempt';
}

const t = initTrpc<Context, ProcedureMeta>().create({
  // Stacks never leave the process, whatever NODE_ENV says (unless `isDev` is false, tRPC puts them into error bodies).
  isDev: false,
  // The REST face's masking: nothing but an AppError's own message reaches a client.
  errorFormatter: formatTrpcError(toAppError),
});

/** Turns domain `AppError`s into `TRPCError`s with the table's tRPC code; the AppError stays as `cause`. */
const errorMapping = t.middleware(async ({ next }) => mapAppError(await next(), databaseUnavailable));

/**
 * Every call counts against the global limit and its procedure's own (`meta.rateLimit`), whichever face it came
 * through: a REST request, a `/trpc` call, or each call of a `/trpc` batch. 429 RATE_LIMITED when over. A
 * request with a body was counted against the global limit when it arrived, before its body was read
 * (`countGlobalOnArrival`): its first call counts only its own limit, and its headers list both counts.
 */
const rateLimit = t.middleware(async ({ ctx, meta, next }) => {
  if (meta?.rateLimit === 'exempt') return next();
  const caller = { bearer: ctx.bearer, ip: ctx.ip };
  const arrival = ctx.takeArrivalCount();
  if (!arrival) {
    const limits: RateLimitName[] = meta?.rateLimit ? ['global', meta.rateLimit] : ['global'];
    await enforceRateLimit(ctx.deps, caller, limits, ctx.setHeader);
  } else if (meta?.rateLimit) {
    await enforceRateLimit(ctx.deps, caller, [meta.rateLimit], (name, value) => {
      const before = arrival.headers[name];
      ctx.setHeader(name, before ? `${before}, ${value}` : value);
    });
  }
  return next();
});

export const router = t.router;
/** Server-side callers of a router (tRPC's `createCallerFactory`): procedures called without HTTP. */
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure.use(errorMapping).use(rateLimit);

/**
 * Procedures that need a session: verifies `Authorization: Bearer` through the identity port and resolves
 * the tenant and role (spec, Authentication). Adds `actor` to the context.
 */
export const authedProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const actor: Actor = await authenticate(ctx.em(), ctx.deps, ctx.bearer, ctx.ip);
  return next({ ctx: { ...ctx, actor } });
});
