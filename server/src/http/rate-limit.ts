import { bearerFrom } from '@notary/platform/trpc/context';
import { AppError, LIMITS, type RateLimitName } from '@notary/shared';
import type { Request, RequestHandler } from 'express';
import { rateLimitSubject } from '../adapters/rate-limit/limiter';
import type { AppDeps } from '../deps';
import { sendError } from './errors';

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
 * The same limits for the hand-written Express routes (upload, certificate, timestamp). A refused request
 * that carries a body (an upload) is answered with `Connection: close` and its body read and discarded up
 * to the upload limit, so that an ordinary client reads the 429 instead of a broken pipe.
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
      (e: unknown) => {
        res.setHeader('Connection', 'close');
        discardBody(req, () => sendError(res, e));
      },
    );
  };
}

/**
 * Reads and drops a request body the route will not use, then answers (`respond`): a client still sending
 * would otherwise see a broken pipe instead of the answer. Past the upload limit it answers at once.
 */
function discardBody(req: Request, respond: () => void): void {
  if (
    req.readableEnded ||
    (req.headers['content-length'] === undefined && !req.headers['transfer-encoding'])
  ) {
    respond();
    return;
  }
  let seen = 0;
  let answered = false;
  const answer = () => {
    if (answered) return;
    answered = true;
    respond();
  };
  req.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > LIMITS.maxUploadBytes) answer();
  });
  req.once('end', answer);
  req.once('error', answer);
  req.resume();
}
