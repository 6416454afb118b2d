import { ProviderRegistrationSchema, ProviderViewSchema } from '../../../providers/schemas';
import { registerProvider } from '../../../providers/service';
import { adminProcedure } from '../../trpc';

/**
 * `POST /api/providers`: registers a provider (spec, Provider registration); 201 with the provider.
 */
export const register = adminProcedure
  .meta({
    openapi: {
      method: 'POST',
      path: '/api/providers',
      tags: ['providers'],
      summary: 'Register a provider',
      description:
        'Every field is required; a 400 names the missing ones (`fields`). `kind` picks the connector (`geo-indica-rest`). The publisher fields compose the attribution block of every search result.',
      successDescription: 'The registered provider (status `never`: trigger a sync next)',
      errorResponses: {
        400: 'Missing or invalid fields, or a baseUrl on a refused address (private, loopback...)',
        401: 'Admin token required',
        409: 'Slug taken',
      },
    },
    rest: { status: 201 },
  })
  // zod reports every issue at once; `validationError` turns them into one 400 naming each field.
  .input(ProviderRegistrationSchema)
  .output(ProviderViewSchema)
  .mutation(({ ctx, input }) => registerProvider(ctx.em(), input, ctx.deps.egress));
