import { ShareAccessSchema } from '@notary/shared';
import { z } from 'zod';
import { accessByShareLink } from '../../../domain/sharing/access';
import { publicProcedure } from '../../trpc';

/**
 * `GET /share/{token}` (spec, Public, no credentials): a presigned URL through a share link; every success is
 * counted and logged.
 */
export const shareLink = publicProcedure
  .meta({
    openapi: {
      protect: false,
      errorResponses: {
        404: 'Invalid (unknown, malformed or revoked) share token',
        410: 'Share link expired or reached its maximum accesses; document deleted under the LGPD',
      },
      method: 'GET',
      path: '/share/{token}',
      tags: ['sharing'],
      summary: 'Open a share link',
    },
  })
  .input(z.object({ token: z.string() }))
  .output(ShareAccessSchema)
  .query(({ ctx, input }) => accessByShareLink(ctx.em(), ctx.deps, input.token, ctx.ip));
