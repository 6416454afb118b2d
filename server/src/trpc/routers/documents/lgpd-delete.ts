import { LgpdDeletionSchema, ResourceId } from '@notary/shared';
import { z } from 'zod';
import { deleteDocumentUnderLgpd, LGPD_REASON_MAX_CHARS } from '../../../domain/documents/lgpd-deletion';
import { authedProcedure } from '../../trpc';
import { DOCUMENT_ERROR_RESPONSES } from './error-responses';

/**
 * `DELETE /api/documents/{id}[?reason=]` (docs/sharing.md, LGPD deletion): destroys the stored file, keeps the hash,
 * serial and anchors on record, revokes every share, writes the audit trail. The document's owner (its
 * uploader while editor or higher, or admin+); the request is validated before any byte is deleted. A document
 * held under a retention rule (`domain/retention/hold.ts`) is refused with 409, audited, nothing deleted.
 */
export const lgpdDelete = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        ...DOCUMENT_ERROR_RESPONSES,
        400: 'Reason over 500 characters, or with control characters (nothing is deleted)',
        403: "Document of another tenant, or not the document's owner (its uploader while editor or higher, an admin or an owner)",
        409: 'Held under a retention rule (a notarial act, or the serventia retention; LGPD art. 16 I): nothing is deleted',
        410: 'Already deleted under the LGPD',
      },
      method: 'DELETE',
      path: '/api/documents/{id}',
      tags: ['documents'],
      protect: true,
      summary: 'LGPD deletion of a document',
    },
  })
  .input(z.object({ id: ResourceId, reason: z.string().max(LGPD_REASON_MAX_CHARS).optional() }))
  .output(LgpdDeletionSchema)
  .mutation(({ ctx, input }) =>
    deleteDocumentUnderLgpd(
      ctx.em(),
      {
        storage: ctx.deps.storage,
        acervoCache: ctx.deps.acervoCache,
        verifyCache: ctx.deps.verifyCache,
      },
      ctx.actor,
      input.id,
      input.reason,
    ),
  );
