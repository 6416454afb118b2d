import { TeamMemberListSchema } from '@notary/shared';
import { listTeamMembers } from '../../../domain/team/service';
import { authedProcedure } from '../../trpc';
import { teamPorts } from './ports';

/**
 * `GET /api/team/members` (spec, Team): `{members:[{userId,email,name,imageUrl,role,isOwner}], myRole}`.
 * Any member may list; roles come from the service's role table, `isOwner` is `role === 'owner'`.
 */
export const listMembers = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'No active organization',
        401: 'Missing or invalid session token',
        403: 'Not a member of the active organization',
        502: 'Identity provider error',
      },
      method: 'GET',
      path: '/api/team/members',
      summary: "The organization's members and their roles",
      tags: ['team'],
      protect: true,
    },
  })
  .output(TeamMemberListSchema)
  .query(({ ctx }) => listTeamMembers(teamPorts(ctx), ctx.actor));
