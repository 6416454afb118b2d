import { ResourceId } from '@notary/shared';
import { ReceiptSchema } from '@notary/verify/receipt';
import { z } from 'zod';
import { getReceipt } from '../../../domain/documents/receipt';
import { authedProcedure } from '../../trpc';
import { DOCUMENT_ERROR_RESPONSES } from './error-responses';

/**
 * `GET /api/documents/:id/receipt`: the document's receipt (docs/receipt.schema.json), what
 * `notary-verify --receipt` checks; the same JSON as the `receipt.json` attached to its certificates. Any
 * member of the tenant may read it (reader included).
 */
export const receipt = authedProcedure
  .meta({
    openapi: {
      errorResponses: DOCUMENT_ERROR_RESPONSES,
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
        transparencyLog: ctx.deps.transparencyLog,
        logWitnessing: ctx.deps.logWitnessing,
      },
      ctx.actor,
      input.id,
    ),
  );
