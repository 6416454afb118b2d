import { InvitationListSchema } from '@notary/shared';
import { listPendingInvitations } from '../../../domain/team/service';
import { authedProcedure } from '../../trpc';
import { teamPorts } from './ports';

/** `GET /api/team/invitations` (spec, Team): `{invitations:[{id,email,role,createdAt}]}`, pending ones; admin+. */
export const listInvitations = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'No active organization',
        401: 'Missing or invalid session token',
        403: 'Below admin',
        502: 'Identity provider error',
      },
      method: 'GET',
      path: '/api/team/invitations',
      summary: "The organization's pending invitations",
      tags: ['team'],
      protect: true,
    },
  })
  .output(InvitationListSchema)
  .query(({ ctx }) => listPendingInvitations(teamPorts(ctx), ctx.actor));
