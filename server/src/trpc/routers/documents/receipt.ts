import { ResourceId } from '@notary/shared';
import { ReceiptSchema } from '@notary/verify/receipt';
import { z } from 'zod';
import { getReceipt } from '../../../domain/documents/receipt';
import { authedProcedure } from '../../trpc';

/**
 * `GET /api/documents/:id/receipt` (issue 16): the document's receipt (docs/receipt.schema.json), what
 * `notary-verify --receipt` checks; the same JSON as the `receipt.json` attached to its certificates. Any
 * member of the tenant may read it (reader included).
 */
export const receipt = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        401: 'Missing or invalid session token',
        403: 'Document of another tenant',
        404: 'No such document',
      },
      method: 'GET',
      path: '/api/documents/{id}/receipt',
      summary: "The document's verification receipt (JSON, checkable offline)",
      tags: ['documents'],
      protect: true,
    },
  })
  .input(z.object({ id: ResourceId }))
  .output(ReceiptSchema)
  .query(({ ctx, input }) =>
    getReceipt(
      ctx.em(),
      {
        config: ctx.deps.config,
        publicUrl: ctx.deps.publicUrl,
        storage: ctx.deps.storage,
        originalSignatures: ctx.deps.originalSignatures,
      },
      ctx.actor,
      input.id,
    ),
  );
