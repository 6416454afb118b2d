import { DocumentEnvelopeSchema, ResourceId } from '@notary/shared';
import { z } from 'zod';
import { getDocument } from '../../../domain/documents/service';
import { authedProcedure } from '../../trpc';
import { DOCUMENT_ERROR_RESPONSES } from './error-responses';

/** `GET /api/documents/:id`: 403 outside the tenant, 404 missing. */
export const get = authedProcedure
  .meta({
    openapi: {
      errorResponses: DOCUMENT_ERROR_RESPONSES,
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
