import { z } from 'zod';
import { ProviderViewSchema } from '../../../providers/schemas';
import { listProviders } from '../../../providers/service';
import { publicProcedure } from '../../trpc';

/** `GET /api/providers`: every provider with its sync stamp. */
export const list = publicProcedure
  .meta({
    openapi: { method: 'GET', path: '/api/providers', tags: ['providers'], summary: 'List providers' },
  })
  .input(z.object({}))
  .output(z.object({ providers: z.array(ProviderViewSchema) }))
  .query(async ({ ctx }) => ({ providers: await listProviders(ctx.em()) }));
