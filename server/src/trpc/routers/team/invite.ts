import { INVITATION_MAIL_LIMITS, TeamInviteInputSchema, TeamInviteResultSchema } from '@notary/shared';
import { inviteToTeam } from '../../../domain/team/service';
import { authedProcedure } from '../../trpc';
import { teamPorts } from './ports';

/**
 * `POST /api/team/invitations` (spec, Team) `{role, email?, wallet?, lang?}`: 201 `{ok:true}` by e-mail (the
 * join link is mailed in `lang`, else the `Accept-Language` language, else Portuguese), 201
 * `{ok:true, joined:true}` by wallet (added directly). E-mail invitations are limited per inviter and per
 * organization an hour (`INVITATION_MAIL_LIMITS`): 429 with `Retry-After` beyond.
 */
export const invite = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'No active organization; not exactly one of email and wallet; malformed email or wallet',
        401: 'Missing or invalid session token',
        403: 'Below admin, or a role above your own',
        404: 'No account linked to that wallet',
        409: 'Already a member',
        429: `Too many invitation mails: ${INVITATION_MAIL_LIMITS.perInviter} an hour per member, ${INVITATION_MAIL_LIMITS.perOrganization} per organization`,
        502: 'Identity provider error, or the invitation mail could not be sent',
      },
      method: 'POST',
      path: '/api/team/invitations',
      summary: 'Invite a member by e-mail or wallet',
      tags: ['team'],
      protect: true,
      successDescription:
        'Invitation mailed (`{ok:true}`) or wallet account added (`{ok:true, joined:true}`)',
    },
    rest: { status: 201 },
  })
  .input(TeamInviteInputSchema)
  .output(TeamInviteResultSchema)
  .mutation(({ ctx, input }) =>
    inviteToTeam(teamPorts(ctx), ctx.actor, { ...input, acceptLanguage: ctx.acceptLanguage }),
  );
