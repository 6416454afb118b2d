import { z } from 'zod';
import { ProviderViewSchema } from '../../../providers/schemas';
import { findProvider, toProviderView } from '../../../providers/service';
import { publicProcedure } from '../../trpc';

/** `GET /api/providers/{slug}`: one provider with its sync stamp (404 when unknown). */
export const get = publicProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/api/providers/{slug}',
      tags: ['providers'],
      summary: 'Get a provider',
      errorResponses: { 404: 'No such provider' },
    },
  })
  .input(z.object({ slug: z.string().min(1).max(64) }))
  .output(ProviderViewSchema)
  .query(async ({ ctx, input }) => toProviderView(await findProvider(ctx.em(), input.slug)));
