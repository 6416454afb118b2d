import { NotarialActSchema, ResourceId } from '@notary/shared';
import { z } from 'zod';
import { getAct } from '../../../domain/acts/service';
import { authedProcedure } from '../../trpc';
import { DOCUMENT_ERROR_RESPONSES } from '../documents/error-responses';

/** `GET /api/documents/{id}/act`: the document's notarial act, for any member of its tenant; 404 when none. */
export const getActProcedure = authedProcedure
  .meta({
    openapi: {
      errorResponses: { ...DOCUMENT_ERROR_RESPONSES, 404: 'No such document, or it has no notarial act' },
      method: 'GET',
      path: '/api/documents/{id}/act',
      summary: "The document's notarial act",
      tags: ['acts'],
      protect: true,
    },
  })
  .input(z.object({ id: ResourceId }))
  .output(NotarialActSchema)
  .query(({ ctx, input }) => getAct(ctx.em(), ctx.actor, input.id));
