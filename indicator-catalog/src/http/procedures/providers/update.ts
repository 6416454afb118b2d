import { z } from 'zod';
import { ProviderUpdateSchema, ProviderViewSchema } from '../../../providers/schemas';
import { updateProvider } from '../../../providers/service';
import { adminProcedure } from '../../trpc';

/**
 * `PATCH /api/providers/{slug}`: changes registration fields (not the slug). Values use the new fields at
 * once; definitions and embeddings follow on the next sync.
 */
export const update = adminProcedure
  .meta({
    openapi: {
      method: 'PATCH',
      path: '/api/providers/{slug}',
      tags: ['providers'],
      summary: 'Update a provider',
      errorResponses: {
        400: 'Invalid fields, or a baseUrl on a refused address',
        401: 'Admin token required',
        404: 'No such provider',
      },
    },
  })
  .input(ProviderUpdateSchema.extend({ slug: z.string().min(1).max(64) }))
  .output(ProviderViewSchema)
  .mutation(async ({ ctx, input }) => {
    const { slug, ...patch } = input;
    const view = await updateProvider(ctx.em(), slug, patch, ctx.deps.egress);
    // This instance's searches use the new fields at once; other instances within their cache check.
    ctx.deps.catalog.invalidate();
    return view;
  });
