import { DocumentEnvelopeSchema, ResourceId } from '@notary/shared';
import { z } from 'zod';
import { getDocument } from '../../../domain/documents/service';
import { authedProcedure } from '../../trpc';

/** `GET /api/documents/:id`: 403 outside the tenant, 404 missing. */
export const get = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        401: 'Missing or invalid session token',
        403: 'Document of another tenant',
        404: 'No such document',
      },
      method: 'GET',
      path: '/api/documents/{id}',
      summary: 'One document with its anchoring status',
      tags: ['documents'],
      protect: true,
    },
  })
  .input(z.object({ id: ResourceId }))
  .output(DocumentEnvelopeSchema)
  .query(async ({ ctx, input }) => ({
    document: await getDocument(ctx.em(), ctx.deps.storage, ctx.actor, input.id),
  }));
