import { InvitationAcceptedSchema } from '@notary/shared';
import { z } from 'zod';
import { acceptTeamInvitation } from '../../../domain/team/service';
import { authedProcedure } from '../../trpc';
import { teamPorts } from './ports';

/**
 * `POST /api/team/invitations/{invitationId}/accept` (docs/team.md, Team: the join link's route): the signed-in
 * user, in any tenant, whose e-mail is the invited one, joins: 200 `{ok:true, organizationId, role}`; 410 the
 * second time; 403 when the inviter was removed or demoted below the invitation's role since.
 */
export const acceptInvitation = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        401: 'Missing or invalid session token',
        403: 'The invitation is for another e-mail address, or its inviter may no longer give its role (it is then canceled)',
        404: 'No such invitation',
        410: 'Invitation already used, canceled or expired',
        502: 'Identity provider error',
      },
      method: 'POST',
      path: '/api/team/invitations/{invitationId}/accept',
      summary: 'Accept an invitation to an organization',
      tags: ['team'],
      protect: true,
    },
  })
  .input(z.object({ invitationId: z.string().min(1).max(128) }))
  .output(InvitationAcceptedSchema)
  .mutation(({ ctx, input }) => acceptTeamInvitation(teamPorts(ctx), ctx.actor, input.invitationId));
