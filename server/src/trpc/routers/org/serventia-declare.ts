import { ServentiaInputSchema, ServentiaSchema } from '@notary/shared';
import { declareServentia } from '../../../domain/retention/serventia';
import { authedProcedure } from '../../trpc';

/**
 * `PUT /api/org/serventia`: JSON `{cns, retentionYears}` (6-digit CNS, 1 to 100 years) or
 * `{cns, retention: "permanent"}` → 200 the serventia as stored. Admin or owner of the active organization.
 * The retention can be declared, kept or extended here; shortening it is refused (409): the operator does it.
 */
export const declareServentiaProcedure = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'Invalid CNS or retention, or no active organization (a personal workspace cannot be a serventia)',
        401: 'Missing or invalid session token',
        403: 'Below admin in the organization',
        409: 'The retention would be shorter than the one declared (only the operator can shorten it)',
      },
      method: 'PUT',
      path: '/api/org/serventia',
      summary: 'Declare the organization a serventia (CNS) with the minimum retention of its documents',
      tags: ['org'],
      protect: true,
    },
  })
  .input(ServentiaInputSchema)
  .output(ServentiaSchema)
  .mutation(({ ctx, input }) => declareServentia(ctx.em(), ctx.actor, input));
