import { LgpdDeletionSchema } from '@notary/shared';
import { z } from 'zod';
import { deleteDocumentUnderLgpd } from '../../../domain/documents/lgpd-deletion';
import { authedProcedure } from '../../trpc';

/**
 * `DELETE /api/documents/{id}[?reason=]` (README, LGPD deletion): destroys the stored file, keeps the hash,
 * serial and anchors on record, revokes every share, writes the audit trail. The uploader, or admin+.
 */
export const lgpdDelete = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'Reason over 500 characters',
        401: 'Missing or invalid session token',
        403: 'Document of another tenant, or neither its uploader nor an admin or owner',
        404: 'No such document',
        410: 'Already deleted under the LGPD',
      },
      method: 'DELETE',
      path: '/api/documents/{id}',
      tags: ['documents'],
      protect: true,
      summary: 'LGPD deletion of a document',
    },
  })
  .input(z.object({ id: z.string(), reason: z.string().max(500).optional() }))
  .output(LgpdDeletionSchema)
  .mutation(({ ctx, input }) =>
    deleteDocumentUnderLgpd(
      ctx.em(),
      { storage: ctx.deps.storage, acervoCache: ctx.deps.acervoCache },
      ctx.actor,
      input.id,
      input.reason,
    ),
  );
