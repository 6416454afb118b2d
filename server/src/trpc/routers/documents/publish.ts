import { DocumentEnvelopeSchema, PublishInputSchema, ResourceId } from '@notary/shared';
import { publishDocument } from '../../../domain/documents/publish';
import { authedProcedure } from '../../trpc';
import { LIVE_DOCUMENT_ERROR_RESPONSES } from './error-responses';

/**
 * `PATCH /api/documents/{id}/publish` (spec, Documents: rule 2) `{published, title?, author?, metadata?}`:
 * only the fields sent are rewritten; editor or higher in an organization; 410 when LGPD-deleted.
 */
export const publish = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        ...LIVE_DOCUMENT_ERROR_RESPONSES,
        400: 'Invalid body',
        403: 'Document of another tenant, or below editor in the organization',
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
