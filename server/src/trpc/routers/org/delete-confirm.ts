import { z } from 'zod';
import { confirmOrganizationDeletion } from '../../../domain/org/deletion';
import { DELETION_CODE_PATTERN, deletionCodeKey } from '../../../domain/org/deletion-code';
import { authedProcedure } from '../../trpc';
import { OrgOkSchema } from './schemas';

/**
 * `POST /api/org/delete/confirm` (spec, Organization): JSON `{code}` (6 digits) → 200 `{ok:true}` once every
 * document, stored object, the organization at the identity provider and the service's tenant are gone.
 * 502 when a later step failed after the files were deleted: the service's resume job finishes it, or confirming
 * again with the same code does at once.
 */
export const deleteConfirm = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'Wrong, expired or burnt code, none pending (for you), or no active organization',
        401: 'Missing or invalid session token',
        403: 'Below admin in the organization',
        409: 'Another confirmation is running this deletion, or documents of the organization are held under a retention rule (LGPD art. 16 I)',
        502: 'Files deleted but removing the organization at the identity provider (or mailing the members) failed: confirm again',
      },
      method: 'POST',
      path: '/api/org/delete/confirm',
      summary: 'Confirm the deletion of the organization with the mailed code',
      tags: ['org'],
      protect: true,
    },
  })
  .input(z.object({ code: z.string().regex(DELETION_CODE_PATTERN, 'must be 6 digits') }))
  .output(OrgOkSchema)
  .mutation(({ ctx, input }) =>
    confirmOrganizationDeletion(
      ctx.em(),
      {
        storage: ctx.deps.storage,
        mailer: ctx.deps.mailer,
        directory: ctx.deps.directory,
        codeKey: deletionCodeKey(ctx.deps.secret),
        log: ctx.log.child({ module: 'org-deletion' }),
      },
      ctx.actor,
      input.code,
    ),
  );
