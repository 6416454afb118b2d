import { Sha256Hex, VerifyByHashSchema } from '@notary/shared';
import { z } from 'zod';
import { verifyByHash } from '../../../domain/documents/service';
import { publicProcedure } from '../../trpc';

/** `GET /api/public/verify?hash=`: anyone verifies a file by its SHA-256 (400 on a malformed hash). */
export const publicVerify = publicProcedure
  .meta({
    openapi: {
      errorResponses: { 400: 'Malformed hash' },
      method: 'GET',
      path: '/api/public/verify',
      tags: ['public'],
      summary: 'Verify a file by SHA-256',
    },
    rateLimit: 'publicVerify',
    rest: {
      // Positive answers are cached 60 s (spec, Limits); a negative one must not hide a fresh upload.
      cacheControl: (out) => ((out as { found: boolean }).found ? 'public, max-age=60' : 'no-cache'),
    },
  })
  .input(z.object({ hash: Sha256Hex }))
  .output(VerifyByHashSchema)
  .query(({ ctx, input }) => ctx.deps.verifyCache.get(input.hash, (hash) => verifyByHash(ctx.em(), hash)));
