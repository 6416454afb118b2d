import { DocumentEnvelopeSchema, PublishInputSchema, ResourceId } from '@notary/shared';
import { publishDocument } from '../../../domain/documents/publish';
import { authedProcedure } from '../../trpc';

/**
 * `PATCH /api/documents/{id}/publish` (spec) `{published, title?, author?, metadata?}`: only the fields sent
 * are rewritten; editor or higher in an organization; 410 when LGPD-deleted.
 */
export const publish = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'Invalid body',
        401: 'Missing or invalid session token',
        403: 'Document of another tenant, or below editor in the organization',
        404: 'No such document',
        410: 'Deleted under the LGPD',
      },
      method: 'PATCH',
      path: '/api/documents/{id}/publish',
      summary: 'Publish a document to the acervo feed, or withdraw it',
      tags: ['documents'],
      protect: true,
    },
  })
  .input(PublishInputSchema.extend({ id: ResourceId }))
  .output(DocumentEnvelopeSchema)
  .mutation(async ({ ctx, input }) => {
    const { id, ...body } = input;
    return { document: await publishDocument(ctx.em(), ctx.deps.acervoCache, ctx.actor, id, body) };
  });
