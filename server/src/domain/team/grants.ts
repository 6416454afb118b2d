import { AppError, canAssignRole, isAppError, type Role } from '@notary/shared';
import type { OrganizationDirectory } from '../../ports/directory';

/** A member's role as it is about to be (or just became): null when they are no longer a member. */
export interface RoleChange {
  userId: string;
  role: Role | null;
}

/**
 * Cancels the pending invitations of the organization `organizationId` whose inviter, after `changes`, could no
 * longer give their role (spec, Team: an invitation is only as good as its inviter's right to send it): all
 * of a member's when their new role is null (removed, or leaving), those above what their new role may give
 * otherwise (an owner stepping down to admin keeps their admin, editor and reader invitations; an admin
 * demoted to editor keeps none), as the same member could send the others again at once.
 *
 * The one rule for every path that changes a role: the team routes (`changeMemberRole`, `removeTeamMember`),
 * the operator CLI (`member:add`, `org:transfer`) and the identity provider's (the webhook's membership
 * events, the periodic reconcile). One listing of the organization's invitations whatever the number of
 * changes. Acceptance re-checks the inviter anyway (`acceptTeamInvitation`).
 * @returns how many invitations were canceled.
 * @throws AppError BAD_GATEWAY on provider error (the directory's, or anything else it lets escape).
 */
export async function cancelInvitationsNoLongerGrantable(
  directory: Pick<OrganizationDirectory, 'listInvitations' | 'cancelInvitation'>,
  organizationId: string,
  changes: readonly RoleChange[],
): Promise<number> {
  if (changes.length === 0) return 0;
  const newRoles = new Map(changes.map((c) => [c.userId, c.role]));
  const invitations = await atProvider(() => directory.listInvitations(organizationId));
  let canceled = 0;
  for (const inv of invitations) {
    if (inv.status !== 'pending' || !newRoles.has(inv.inviterUserId)) continue;
    const role = newRoles.get(inv.inviterUserId) ?? null;
    if (role !== null && canAssignRole(role, inv.role)) continue;
    await atProvider(() => directory.cancelInvitation(inv.id));
    canceled++;
  }
  return canceled;
}

async function atProvider<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (isAppError(e)) throw e;
    throw new AppError('BAD_GATEWAY', 'Identity provider error', { cause: e });
  }
}
