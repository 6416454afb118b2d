import { AssignableRoleSchema, MemberRoleChangedSchema } from '@notary/shared';
import { z } from 'zod';
import { changeMemberRole } from '../../../domain/team/service';
import { authedProcedure } from '../../trpc';
import { teamPorts } from './ports';

/** `PATCH /api/team/members/{userId}` (spec, Team) `{role: admin|editor|reader}`: 200 `{ok:true, role}`. */
export const updateMember = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'No active organization; invalid role',
        401: 'Missing or invalid session token',
        403: 'Below admin, a member above your role, or a role above your own',
        404: 'No such member',
        409: 'The last owner cannot be demoted',
        502: 'Identity provider error (nothing changed)',
      },
      method: 'PATCH',
      path: '/api/team/members/{userId}',
      summary: "Change a member's role",
      tags: ['team'],
      protect: true,
    },
  })
  .input(z.object({ userId: z.string().min(1).max(128), role: AssignableRoleSchema }))
  .output(MemberRoleChangedSchema)
  .mutation(({ ctx, input }) => changeMemberRole(teamPorts(ctx), ctx.actor, input.userId, input.role));
