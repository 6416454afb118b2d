import { OkSchema, ResourceId } from '@notary/shared';
import { z } from 'zod';
import { removeAct } from '../../../domain/acts/service';
import { authedProcedure } from '../../trpc';
import { LIVE_DOCUMENT_ERROR_RESPONSES } from '../documents/error-responses';

/** `DELETE /api/documents/{id}/act`: removes the document's notarial act (its history stays); editor or higher. */
export const removeActProcedure = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        ...LIVE_DOCUMENT_ERROR_RESPONSES,
        403: 'Document of another tenant, or below editor in the organization',
        404: 'No such document, or it has no notarial act',
      },
      method: 'DELETE',
      path: '/api/documents/{id}/act',
      summary: "Remove the document's notarial act",
      tags: ['acts'],
      protect: true,
    },
  })
  .input(z.object({ id: ResourceId }))
  .output(OkSchema)
  .mutation(({ ctx, input }) => removeAct(ctx.em(), ctx.actor, input.id));
