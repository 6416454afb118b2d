import { type RateLimitName, Sha256Hex, type VerifyByHashDto, VerifyByHashSchema } from '@notary/shared';
import { z } from 'zod';
import { verifyByHashCached } from '../../../domain/documents/service';
import { publicProcedure } from '../../trpc';

/** Where `public.verify` is served on the REST face (also by the HTTP fast route, `http/public-verify.ts`). */
export const PUBLIC_VERIFY_PATH = '/api/public/verify';

/** The spec's limit of public verification, counted on top of `global` (both faces). */
export const PUBLIC_VERIFY_RATE_LIMIT = 'publicVerify' satisfies RateLimitName;

/** The query of `GET /api/public/verify` (both faces): `hash`, a hex SHA-256 in any case, lower-cased. */
export const PublicVerifyInput = z.object({ hash: Sha256Hex });

/** Positive answers are cached 60 s (spec, Limits); a negative one must not hide a fresh upload. */
export function publicVerifyCacheControl(answer: VerifyByHashDto): string {
  return answer.found ? 'public, max-age=60' : 'no-cache';
}

/** `GET /api/public/verify?hash=`: anyone verifies a file by its SHA-256 (400 on a malformed hash). */
export const publicVerify = publicProcedure
  .meta({
    openapi: {
      protect: false,
      errorResponses: { 400: 'Malformed hash' },
      method: 'GET',
      path: PUBLIC_VERIFY_PATH,
      tags: ['public'],
      summary: 'Verify a file by SHA-256',
    },
    rateLimit: PUBLIC_VERIFY_RATE_LIMIT,
    rest: { cacheControl: (out) => publicVerifyCacheControl(out as VerifyByHashDto) },
  })
  .input(PublicVerifyInput)
  .output(VerifyByHashSchema)
  .query(({ ctx, input }) => verifyByHashCached(ctx.deps.verifyCache, ctx.em, input.hash));
