import { OkSchema, ResourceId } from '@notary/shared';
import { z } from 'zod';
import { revokeAccessPolicy } from '../../../domain/sharing/policies';
import { authedProcedure } from '../../trpc';

/** `DELETE /api/documents/{id}/access-policies/{policyId}`: revokes the policy at once (idempotent). */
export const revokePolicy = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        401: 'Missing or invalid session token',
        403: "Document of another tenant, or not the document's owner (its uploader while editor or higher, an admin or an owner)",
        404: 'No such document, or no such policy for it',
      },
      method: 'DELETE',
      path: '/api/documents/{id}/access-policies/{policyId}',
      summary: 'Revoke an access policy',
      tags: ['sharing'],
      protect: true,
    },
  })
  .input(z.object({ id: ResourceId, policyId: ResourceId }))
  .output(OkSchema)
  .mutation(({ ctx, input }) => revokeAccessPolicy(ctx.em(), ctx.actor, input.id, input.policyId));
