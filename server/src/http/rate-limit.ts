import { bearerFrom } from '@notary/platform/trpc/context';
import type { RateLimitName } from '@notary/shared';
import type { RequestHandler } from 'express';
import type { AppDeps } from '../deps';
import { enforceRateLimit } from '../trpc/rate-limit';
import { answerEarly } from './early-answer';

/**
 * The procedures' limits (`enforceRateLimit`) for the hand-written Express routes (upload, certificate,
 * timestamp). A refused request is answered at once with `Connection: close` (`answerEarly`): an upload's body
 * is not read for nothing, and an ordinary client reads the 429 instead of a broken pipe.
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
