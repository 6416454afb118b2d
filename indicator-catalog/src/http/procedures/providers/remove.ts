import { z } from 'zod';
import { removeProvider } from '../../../providers/remove';
import { adminProcedure } from '../../trpc';

/** `DELETE /api/providers/{slug}`: removes a provider, its definitions and its vector index points. */
export const remove = adminProcedure
  .meta({
    openapi: {
      method: 'DELETE',
      path: '/api/providers/{slug}',
      tags: ['providers'],
      summary: 'Remove a provider',
      errorResponses: {
        401: 'Admin token required',
        404: 'No such provider',
        409: 'A sync of it is running',
      },
    },
  })
  .input(z.object({ slug: z.string().min(1).max(64) }))
  .output(z.object({ removed: z.string() }))
  .mutation(async ({ ctx, input }) => {
    await removeProvider(ctx.deps, ctx.em(), input.slug);
    return { removed: input.slug };
  });
