import { AppError, type RateLimitName } from '@notary/shared';
import type { AppDeps } from '../deps';

/**
 * Counts one call of the caller against `limits` (spec, Limits) and writes the standard rate limit headers
 * through `setHeader`. The caller is the session token's user when the token verifies, else the client IP
 * (as `TRUST_PROXY` resolves it): a bad token is counted against the IP, so guessing tokens is limited too.
 * The procedures' middleware (`trpc.ts`) and the Express routes (`http/rate-limit.ts`) both count through it.
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
  const decision = await deps.rateLimiter.consume(limits, { userId, ip: request.ip });
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
