import type { ErrorAnswer } from '@notary/platform/http/errors';
import { bearerFrom } from '@notary/platform/trpc/context';
import { ERROR_TABLE } from '@notary/shared';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import type { RequestHandler } from 'express';
import type { AppDeps } from '../deps';
import { recordArrivalCount } from '../trpc/arrival-count';
import { enforceRateLimit } from '../trpc/rate-limit';
import { announcesBody } from './announces-body';
import { answerEarly } from './early-answer';

/**
 * Counts a request that announces a body (`/trpc` calls, the REST face's writes) against the caller's global
 * limit when it arrives, before any parser reads the body: a caller over its budget is answered 429 at once
 * with `Connection: close` (`answerEarly`), its body not waited for. A request within the budget goes on with
 * its count noted (`recordArrivalCount`): its first procedure call counts only its own limit, so the budget a
 * request spends is unchanged. A `/trpc` request is refused in tRPC's own shape for a request refused whole
 * (`{error: shape}`, which a tRPC client reads as the error of each of its calls); any other in the REST
 * error body. Requests without a body are counted by their calls as before.
 */
export function countGlobalOnArrival(deps: AppDeps): RequestHandler {
  return (req, res, next) => {
    if (!deps.rateLimiter.enabled || !announcesBody(req.headers)) {
      next();
      return;
    }
    const headers: Record<string, string> = {};
    enforceRateLimit(
      deps,
      { bearer: bearerFrom(req.headers.authorization), ip: req.ip ?? null },
      ['global'],
      (name, value) => {
        headers[name] = value;
        res.setHeader(name, value);
      },
    ).then(
      () => {
        recordArrivalCount(req, { headers });
        next();
      },
      (e: unknown) =>
        answerEarly(
          req,
          res,
          e,
          req.path === '/trpc' || req.path.startsWith('/trpc/') ? trpcRefusal : undefined,
        ),
    );
  };
}

/** A refusal of a whole `/trpc` request as tRPC answers one (its error formatter's shape, `formatTrpcError`). */
function trpcRefusal(answer: ErrorAnswer): unknown {
  const { message, code, ...rest } = answer.body;
  return {
    error: {
      message,
      code: TRPC_ERROR_CODES_BY_KEY[ERROR_TABLE[code].trpc],
      data: { code, httpStatus: answer.status, ...rest },
    },
  };
}
