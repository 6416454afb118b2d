import { AppError } from '@notary/shared';
import type { RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { sendError } from './errors';

/** Acervo feed requests per minute per client IP (spec, Limits: "Acervo feed 60 per minute"). */
export const ACERVO_REQUESTS_PER_MINUTE = 60;

/**
 * Rate limit of `GET /api/public/acervo`, in process, per client IP (as `TRUST_PROXY` resolves it), counted
 * before the token is checked so that guessing tokens is limited too. 429 `{message, code:"RATE_LIMITED"}`.
 */
export function acervoRateLimit(): RequestHandler {
  return rateLimit({
    windowMs: 60_000,
    limit: ACERVO_REQUESTS_PER_MINUTE,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    keyGenerator: (req) => `acervo:${ipKeyGenerator(req.ip ?? 'unknown')}`,
    handler: (_req, res) =>
      sendError(
        res,
        new AppError(
          'RATE_LIMITED',
          `Too many acervo feed requests: ${ACERVO_REQUESTS_PER_MINUTE} per minute`,
        ),
      ),
  });
}
