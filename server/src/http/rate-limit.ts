import { bearerFrom } from '@notary/platform/trpc/context';
import { AppError, type RateLimitName } from '@notary/shared';
import type { RequestHandler } from 'express';
import { rateLimitSubject } from '../adapters/rate-limit/limiter';
import type { AppDeps } from '../deps';
import { answerEarly } from './early-answer';

/**
 * Counts one call of the caller against `limits` (spec, Limits) and writes the standard rate limit headers
 * through `setHeader`. The caller is the session token's user when the token verifies, else the client IP
 * (as `TRUST_PROXY` resolves it): a bad token is counted against the IP, so guessing tokens is limited too.
 * @throws AppError RATE_LIMITED (429) with `retryAfterSeconds` when any of the limits is spent.
 */
export async function enforceRateLimit(
  deps: Pick<AppDeps, 'rateLimiter' | 'tokens'>,
  request: { bearer: string | null; ip: string | null },
  limits: readonly RateLimitName[],
  setHeader: (name: string, value: string) => void,
): Promise<void> {
  if (!deps.rateLimiter.enabled) return;
  let userId: string | null = null;
  if (request.bearer) {
    try {
      userId = (await deps.tokens.verify(request.bearer)).userId;
    } catch {
      // Not a session token (an acervo token, garbage): counted per IP.
    }
  }
  const decision = await deps.rateLimiter.consume(limits, rateLimitSubject(userId, request.ip));
  if (decision.headers) {
    setHeader('RateLimit-Policy', decision.headers['RateLimit-Policy']);
    setHeader('RateLimit', decision.headers.RateLimit);
  }
  if (!decision.allowed) {
    setHeader('Retry-After', String(decision.retryAfterSeconds));
    throw new AppError(
      'RATE_LIMITED',
      `Too many requests (${decision.exceeded} limit): try again in ${decision.retryAfterSeconds} s`,
      { retryAfterSeconds: decision.retryAfterSeconds },
    );
  }
}

/**
 * The same limits for the hand-written Express routes (upload, certificate, timestamp). A refused request is
 * answered at once with `Connection: close` (`answerEarly`): an upload's body is not read for nothing, and
 * an ordinary client reads the 429 instead of a broken pipe.
 */
export function rateLimited(deps: AppDeps, limits: readonly RateLimitName[]): RequestHandler {
  return (req, res, next) => {
    enforceRateLimit(
      deps,
      { bearer: bearerFrom(req.headers.authorization), ip: req.ip ?? null },
      limits,
      (name, value) => res.setHeader(name, value),
    ).then(
      () => next(),
      (e: unknown) => answerEarly(req, res, e),
    );
  };
}
