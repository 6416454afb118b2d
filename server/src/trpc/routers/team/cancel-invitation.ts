import { TeamOkSchema } from '@notary/shared';
import { z } from 'zod';
import { cancelTeamInvitation } from '../../../domain/team/service';
import { authedProcedure } from '../../trpc';
import { teamPorts } from './ports';

/** `DELETE /api/team/invitations/{invitationId}` (spec, Team): 200 `{ok:true}`; admin+. */
export const cancelInvitation = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'No active organization',
        401: 'Missing or invalid session token',
        403: 'Below admin, or an invitation for a role above your own',
        404: 'No such pending invitation in this organization',
        502: 'Identity provider error',
      },
      method: 'DELETE',
      path: '/api/team/invitations/{invitationId}',
      summary: 'Cancel a pending invitation',
      tags: ['team'],
      protect: true,
    },
  })
  .input(z.object({ invitationId: z.string().min(1).max(128) }))
  .output(TeamOkSchema)
  .mutation(({ ctx, input }) => cancelTeamInvitation(teamPorts(ctx), ctx.actor, input.invitationId));
