import { AcervoFeedQuerySchema, AcervoFeedSchema, LIMITS } from '@notary/shared';
import { readAcervoFeed } from '../../../domain/acervo/feed';
import { publicProcedure } from '../../trpc';

/**
 * `GET /api/public/acervo?limit=&offset=` with `Authorization: Bearer <acervo token>` (spec, Acervo feed).
 * Cached 5 minutes in process; `Cache-Control: private` because the answer depends on the token (a shared
 * cache keyed by URL would hand one tenant's feed to another token, or to no token).
 */
export const publicAcervo = publicProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'limit outside 1..60 or negative offset',
        401: 'Missing or invalid acervo token',
      },
      method: 'GET',
      path: '/api/public/acervo',
      tags: ['public'],
      summary: "A tenant's published documents (acervo feed)",
      description:
        'Authorization: Bearer <acervo token> (from POST /api/settings/acervo-token, not a session token). Cached 5 minutes.',
    },
    rest: { cacheControl: () => `private, max-age=${LIMITS.acervoCacheSeconds}` },
    // Counted per client IP (an acervo token is not a user) before the token is checked: guessing is limited.
    rateLimit: 'acervo',
  })
  .input(AcervoFeedQuerySchema)
  .output(AcervoFeedSchema)
  .query(({ ctx, input }) => readAcervoFeed(ctx.em(), ctx.deps.acervoCache, ctx.bearer, input));
