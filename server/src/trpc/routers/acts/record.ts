import { NotarialActInputSchema, NotarialActSchema, ResourceId } from '@notary/shared';
import { recordAct } from '../../../domain/acts/service';
import { authedProcedure } from '../../trpc';
import { LIVE_DOCUMENT_ERROR_RESPONSES } from '../documents/error-responses';

/**
 * `PUT /api/documents/{id}/act` `{type, mne?, selo?: {state, code}, book?, page?}`: records the document's
 * notarial act or replaces it whole; editor or higher; every change leaves a history row.
 */
export const recordActProcedure = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        ...LIVE_DOCUMENT_ERROR_RESPONSES,
        400: 'Invalid body; a wrong MNE names what is wrong in it (format, date, check digits)',
        403: 'Document of another tenant, or below editor in the organization',
        409: 'The MNE is already recorded for another document',
      },
      method: 'PUT',
      path: '/api/documents/{id}/act',
      summary: "Record or replace the document's notarial act (MNE, selo, book and page)",
      tags: ['acts'],
      protect: true,
    },
  })
  .input(NotarialActInputSchema.extend({ id: ResourceId }))
  .output(NotarialActSchema)
  .mutation(({ ctx, input }) => {
    const { id, ...act } = input;
    return recordAct(ctx.em(), ctx.actor, id, act);
  });
