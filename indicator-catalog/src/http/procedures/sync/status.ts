import { z } from 'zod';
import { getSyncStatus, SyncStatusViewSchema } from '../../../sync/status';
import { publicProcedure } from '../../trpc';

/** `GET /api/providers/{slug}/sync`: status, live progress and the last runs of a provider's syncs. */
export const status = publicProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/api/providers/{slug}/sync',
      tags: ['sync'],
      summary: 'Sync status and progress',
      errorResponses: { 404: 'No such provider' },
    },
  })
  .input(z.object({ slug: z.string().min(1).max(64) }))
  .output(SyncStatusViewSchema)
  .query(({ ctx, input }) => getSyncStatus(ctx.em(), input.slug));
