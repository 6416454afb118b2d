import { z } from 'zod';
import { adminProcedure } from '../../trpc';

/**
 * `POST /api/providers/{slug}/sync`: starts a sync in the background; 202 with the run id. Follow it with
 * `GET /api/providers/{slug}/sync`.
 */
export const trigger = adminProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/api/providers/{slug}/sync',
      tags: ['sync'],
      summary: 'Trigger a sync',
      successDescription: 'The sync started',
      errorResponses: {
        401: 'Admin token required',
        404: 'No such provider',
        409: 'A sync of it is running',
      },
    },
    rest: { status: 202 },
  })
  .input(z.object({ slug: z.string().min(1).max(64) }))
  .output(z.object({ runId: z.string(), status: z.literal('running') }))
  .mutation(async ({ ctx, input }) => {
    const { runId } = await ctx.deps.sync.start(input.slug, 'api');
    return { runId, status: 'running' as const };
  });
