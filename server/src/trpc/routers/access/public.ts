import { ResourceId, ShareAccessSchema } from '@notary/shared';
import { z } from 'zod';
import { accessPublic } from '../../../domain/sharing/access';
import { publicProcedure } from '../../trpc';

/**
 * `GET /access/public/{documentId}` (spec, Public, no credentials): a presigned URL through the document's
 * public policy.
 */
export const publicAccess = publicProcedure
  .meta({
    openapi: {
      protect: false,
      errorResponses: {
        404: 'Not publicly shared',
        410: 'Public access expired or reached its maximum accesses; document deleted under the LGPD',
      },
      method: 'GET',
      path: '/access/public/{documentId}',
      tags: ['sharing'],
      summary: 'Open a publicly shared document',
    },
  })
  .input(z.object({ documentId: ResourceId }))
  .output(ShareAccessSchema)
  .query(({ ctx, input }) => accessPublic(ctx.em(), ctx.deps, input.documentId, ctx.ip));
