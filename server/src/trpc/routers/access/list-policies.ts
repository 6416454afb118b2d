import { AccessPolicyListSchema, ResourceId } from '@notary/shared';
import { z } from 'zod';
import { listAccessPolicies } from '../../../domain/sharing/policies';
import { authedProcedure } from '../../trpc';

/** `GET /api/documents/{id}/access-policies`: every policy of the document (revoked included), newest first. */
export const listPolicies = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        401: 'Missing or invalid session token',
        403: "Document of another tenant, or not the document's owner (its uploader while editor or higher, an admin or an owner)",
        404: 'No such document',
      },
      method: 'GET',
      path: '/api/documents/{id}/access-policies',
      summary: "A document's access policies",
      tags: ['sharing'],
      protect: true,
    },
  })
  .input(z.object({ id: ResourceId }))
  .output(AccessPolicyListSchema)
  .query(({ ctx, input }) => listAccessPolicies(ctx.em(), ctx.actor, input.id));
