import { CreateAccessPolicyInputSchema, CreatedAccessPolicySchema, ResourceId } from '@notary/shared';
import { createAccessPolicy } from '../../../domain/sharing/policies';
import { authedProcedure } from '../../trpc';

/**
 * `POST /api/documents/{id}/access-policies` (docs/sharing.md): creates a link, public, wallet or e-mail
 * access policy; the document's owner only (`requirePermission` with `documentOwner`). 201
 * `{policy, token?, shareUrl?}`: a link's token is shown this once.
 */
export const createPolicy = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'Invalid body (kind, permission, expiry, maximum accesses, addresses)',
        401: 'Missing or invalid session token',
        403: "Document of another tenant, or not the document's owner (its uploader while editor or higher, an admin or an owner)",
        404: 'No such document',
        410: 'Deleted under the LGPD',
      },
      method: 'POST',
      path: '/api/documents/{id}/access-policies',
      summary: 'Share a document (link, public, e-mail or wallet access policy)',
      tags: ['sharing'],
      protect: true,
      successDescription: 'The policy; for a link also its token and URL, shown only in this answer',
    },
    rest: { status: 201 },
  })
  .input(CreateAccessPolicyInputSchema.safeExtend({ id: ResourceId }))
  .output(CreatedAccessPolicySchema)
  .mutation(({ ctx, input }) => {
    const { id, ...body } = input;
    return createAccessPolicy(ctx.em(), ctx.actor, ctx.deps.publicUrl, id, body);
  });
