import { TeamOkSchema } from '@notary/shared';
import { z } from 'zod';
import { removeTeamMember } from '../../../domain/team/service';
import { authedProcedure } from '../../trpc';
import { teamPorts } from './ports';

/**
 * `DELETE /api/team/members/{userId}` (spec, Team): 200 `{ok:true}`. Removing another member needs admin+
 * and a member not above your role; removing yourself (leaving) is allowed, except for the last owner.
 */
export const removeMember = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'No active organization',
        401: 'Missing or invalid session token',
        403: 'Below admin, or a member above your role',
        404: 'No such member',
        409: 'The last owner cannot be removed',
        502: 'Identity provider error (nothing changed)',
      },
      method: 'DELETE',
      path: '/api/team/members/{userId}',
      summary: 'Remove a member from the organization',
      tags: ['team'],
      protect: true,
    },
  })
  .input(z.object({ userId: z.string().min(1).max(128) }))
  .output(TeamOkSchema)
  .mutation(({ ctx, input }) => removeTeamMember(teamPorts(ctx), ctx.actor, input.userId));
