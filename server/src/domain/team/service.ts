import type { SqlEntityManager } from '@mikro-orm/sql';
import {
  AppError,
  type AssignableRole,
  canAssignRole,
  canManageMember,
  INVITATION_MAIL_LIMITS,
  type InvitationAcceptedDto,
  type InvitationDto,
  type InvitationListDto,
  isAppError,
  type MailLanguage,
  type MemberRoleChangedDto,
  ROLE_RANK,
  type Role,
  type TeamInviteResultDto,
  type TeamMemberDto,
  type TeamMemberListDto,
  type TeamOkDto,
  WALLET_ADDRESS_PATTERN,
} from '@notary/shared';
import { TenantMember } from '../../db/entities';
import type { DirectoryInvitation, OrganizationDirectory } from '../../ports/directory';
import { isPlaceholderEmail, type Mailer } from '../../ports/mail';
import type { QuotaCounter } from '../../ports/rate-limit';
import { invitationMail, pickMailLanguage } from '../mail/invitation';
import { type Actor, type OrganizationActor, requireOrganization } from '../tenancy/actor';
import { requirePermission } from '../tenancy/permissions';
import { ensureOrganizationTenant, setTenantRole } from '../tenancy/resolve';
import { cancelInvitationsNoLongerGrantable } from './grants';
import { withOrganizationLock } from './lock';

/**
 * Team management (spec, Team: see also docs/team.md, Team): members with the service's roles, invitations by
 * e-mail or wallet, role changes and removals, under the role hierarchy of `shared/src/roles.ts`.
 *
 * Memberships live at the identity provider (`OrganizationDirectory`); roles live in the service's table
 * (`tenant_member`), which authorization reads. Every change goes to the provider first and then to the table
 * (upserts and deletes, idempotent with the provider's event listener writing the same rows), so a provider
 * failure (502) leaves the table as it was.
 *
 * Every function except `acceptTeamInvitation` needs an active organization: without one it throws AppError
 * BAD_REQUEST `No active organization` before anything else.
 */

/** What the team functions use. */
export interface TeamPorts {
  /** The request's EntityManager. */
  em: SqlEntityManager;
  directory: OrganizationDirectory;
  /** Selects how team changes are serialized (`withOrganizationLock`). */
  databaseKind: 'postgresql' | 'pglite';
}

/** What sending an invitation mail needs besides `TeamPorts`. */
export interface InvitationPorts extends TeamPorts {
  mailer: Mailer;
  /** `PUBLIC_URL` (base of the join link), without trailing slash. */
  publicUrl: string;
  /** Invitation mails per inviter and per organization (`INVITATION_MAIL_LIMITS`). */
  invitationMailQuota: QuotaCounter;
}

/**
 * Calls the identity provider: AppErrors pass through (NOT_FOUND, GONE, FORBIDDEN, BAD_GATEWAY...), anything
 * else becomes AppError BAD_GATEWAY (spec, Errors: 502 identity provider error).
 */
async function provider<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (isAppError(e)) throw e;
    throw new AppError('BAD_GATEWAY', 'Identity provider error', { cause: e });
  }
}

/** A member as the provider lists it, with the service's role. */
interface TeamEntry {
  member: TeamMemberDto;
  joinedAt: Date;
}

/**
 * The organization's members: the provider's member list (e-mail, name, image) joined with the service's role
 * table, in one provider call and one query. A member the table does not know yet (not reconciled) shows the
 * provider's role; table rows of users the provider no longer lists are not members and are left out.
 * Ordered by role (owner first), then by joining date.
 */
async function loadTeam(
  em: SqlEntityManager,
  directory: OrganizationDirectory,
  org: { organizationId: string; tenant: { id: string } },
): Promise<TeamEntry[]> {
  const [members, rows] = await Promise.all([
    provider(() => directory.listMembers(org.organizationId)),
    em.find(TenantMember, { tenant: org.tenant.id }),
  ]);
  const roles = new Map(rows.map((row) => [row.userId, row.role]));
  return members
    .map((m) => {
      const role = roles.get(m.userId) ?? m.role;
      return {
        joinedAt: m.joinedAt,
        member: {
          userId: m.userId,
          email: m.email,
          name: m.name,
          imageUrl: m.imageUrl,
          role,
          isOwner: role === 'owner',
        },
      };
    })
    .sort(
      (a, b) =>
        ROLE_RANK[b.member.role] - ROLE_RANK[a.member.role] || a.joinedAt.getTime() - b.joinedAt.getTime(),
    );
}

/** A person's name for a mail: the display name, else a real e-mail address, else the service's name. */
function displayName(name: string | undefined, email: string | null | undefined): string {
  if (name?.trim()) return name.trim();
  if (email && !isPlaceholderEmail(email)) return email;
  return 'Notary';
}

/**
 * The caller's role as of `team` (read under the organization lock): a role changed by a concurrent request
 * since the caller was authenticated counts, not the stale one.
 * @throws AppError FORBIDDEN when the caller is no longer a member.
 */
function currentRole(team: TeamEntry[], actor: OrganizationActor): Role {
  const me = team.find((e) => e.member.userId === actor.userId);
  if (!me) throw new AppError('FORBIDDEN', 'You are no longer a member of this organization');
  return me.member.role;
}

const ownerCount = (team: TeamEntry[]): number => team.filter((e) => e.member.role === 'owner').length;

/** What `manageTeam` is refused for (`requirePermission`). */
const MANAGE_TEAM = "manage this organization's team";

/**
 * Whether the member `inviterUserId` may, as of `team`, still give `role` (a member with manageTeam and a role
 * not below it): an invitation stays as good as its inviter's current right to send it.
 */
function inviterMayGrant(team: TeamEntry[], inviterUserId: string, role: Role): boolean {
  const inviter = team.find((e) => e.member.userId === inviterUserId);
  return inviter !== undefined && canAssignRole(inviter.member.role, role);
}

/**
 * Counts one invitation mail against `INVITATION_MAIL_LIMITS` (per inviter and per organization, per hour):
 * an invitation names the organization to an outside address, so a member or a compromised account must not
 * be able to send them in bulk.
 * @throws AppError RATE_LIMITED (429) with `retryAfterSeconds` when either budget is spent.
 */
async function countInvitationMail(quota: QuotaCounter, org: OrganizationActor): Promise<void> {
  const { perInviter, perOrganization } = INVITATION_MAIL_LIMITS;
  const decision = await quota.consume([
    { key: `user:${org.userId}`, limit: perInviter },
    { key: `org:${org.organizationId}`, limit: perOrganization },
  ]);
  if (decision.allowed) return;
  const minutes = Math.ceil(decision.retryAfterSeconds / 60);
  const which = decision.exceeded?.startsWith('org:')
    ? `${perOrganization} an hour per organization`
    : `${perInviter} an hour per member`;
  throw new AppError(
    'RATE_LIMITED',
    `Too many invitation mails (${which}): try again in ${minutes} minute${minutes === 1 ? '' : 's'}`,
    { retryAfterSeconds: decision.retryAfterSeconds },
  );
}

const isPending = (inv: DirectoryInvitation, now: Date): boolean =>
  inv.status === 'pending' && inv.expiresAt.getTime() > now.getTime();

const toInvitationDto = (inv: DirectoryInvitation): InvitationDto => ({
  id: inv.id,
  email: inv.email,
  role: inv.role,
  createdAt: inv.createdAt.toISOString(),
});

/**
 * `GET /api/team/members`: every member with e-mail, name, image, the service's role and `isOwner`
 * (`role === 'owner'`: the creator is owner and stays so unless the operator transfers ownership), plus the
 * caller's own role. Any member may list.
 * @throws AppError BAD_REQUEST `No active organization`; BAD_GATEWAY on provider error.
 */
export async function listTeamMembers(ports: TeamPorts, actor: Actor): Promise<TeamMemberListDto> {
  const org = requireOrganization(actor);
  const team = await loadTeam(ports.em, ports.directory, org);
  return { members: team.map((e) => e.member), myRole: org.role };
}

/**
 * `GET /api/team/invitations`: pending, unexpired invitations, oldest first. Admin or owner only (an
 * invitation names an outsider's e-mail address). An invitation whose inviter may no longer give its role
 * (removed or demoted, also behind the service's back at the provider) is left out: it can no longer be
 * accepted.
 * @throws AppError BAD_REQUEST `No active organization`; FORBIDDEN below admin; BAD_GATEWAY on provider error.
 */
export async function listPendingInvitations(ports: TeamPorts, actor: Actor): Promise<InvitationListDto> {
  const org = requireOrganization(actor);
  requirePermission(org, 'manageTeam', MANAGE_TEAM);
  const now = new Date();
  const [invitations, team] = await Promise.all([
    provider(() => ports.directory.listInvitations(org.organizationId)),
    loadTeam(ports.em, ports.directory, org),
  ]);
  return {
    invitations: invitations
      .filter((inv) => isPending(inv, now) && inviterMayGrant(team, inv.inviterUserId, inv.role))
      .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
      .map(toInvitationDto),
  };
}

/** `POST /api/team/invitations` input as the domain takes it. */
export interface InviteInput {
  role: AssignableRole;
  email?: string | undefined;
  wallet?: string | undefined;
  /** Explicit mail language; else `acceptLanguage`; else Portuguese. */
  lang?: MailLanguage | undefined;
  /** The inviter's request `Accept-Language` header. */
  acceptLanguage?: string | null | undefined;
}

/**
 * `POST /api/team/invitations` (spec, Team: and States and transitions, Invitation).
 * - By e-mail: creates (or renews) the invitation at the provider, then mails the join link (`invitationMail`)
 *   in the chosen language; the role applies on join. Answers `{ok:true}`. At most `INVITATION_MAIL_LIMITS`
 *   mails per inviter and per organization an hour.
 * - By wallet (`0x` + 40 hex): the account that signed in with that wallet joins directly with the role, at
 *   the provider and in the role table. Answers `{ok:true, joined:true}`.
 * @throws AppError BAD_REQUEST `No active organization`, neither or both of email/wallet, a malformed wallet,
 *   a placeholder (wallet account) address; FORBIDDEN without manageTeam or for a role above the caller's;
 *   NOT_FOUND no account has that wallet; CONFLICT the person is already a member; RATE_LIMITED too many
 *   invitation mails (with `retryAfterSeconds`); BAD_GATEWAY provider error or the mail could not be sent (the
 *   invitation is then canceled).
 */
export async function inviteToTeam(
  ports: InvitationPorts,
  actor: Actor,
  input: InviteInput,
): Promise<TeamInviteResultDto> {
  const org = requireOrganization(actor);
  const email = input.email?.trim().toLowerCase() || undefined;
  const wallet = input.wallet?.trim() || undefined;
  if ((email === undefined) === (wallet === undefined)) {
    throw new AppError('BAD_REQUEST', 'Send exactly one of email or wallet');
  }
  requirePermission(org, 'manageTeam', MANAGE_TEAM);
  if (!canAssignRole(org.role, input.role)) {
    throw new AppError('FORBIDDEN', `A ${org.role} cannot give the role ${input.role}`);
  }
  if (wallet !== undefined) return inviteByWallet(ports, org, wallet, input.role);
  return inviteByEmail(ports, org, email ?? '', input);
}

async function inviteByWallet(
  ports: TeamPorts,
  org: OrganizationActor,
  wallet: string,
  role: AssignableRole,
): Promise<TeamInviteResultDto> {
  if (!WALLET_ADDRESS_PATTERN.test(wallet)) {
    throw new AppError('BAD_REQUEST', 'wallet: must be 0x plus 40 hex digits');
  }
  const user = await provider(() => ports.directory.findUserByWallet(wallet));
  if (!user) throw new AppError('NOT_FOUND', 'No account is linked to that wallet');
  return withOrganizationLock(ports.em, ports.databaseKind, org.organizationId, async (em) => {
    const team = await loadTeam(em, ports.directory, org);
    const myRole = currentRole(team, org);
    requirePermission({ ...org, role: myRole }, 'manageTeam', MANAGE_TEAM);
    if (!canAssignRole(myRole, role)) {
      throw new AppError('FORBIDDEN', `A ${myRole} cannot give the role ${role}`);
    }
    // Re-adding an existing member would change their role, bypassing the hierarchy checks of PATCH.
    if (team.some((e) => e.member.userId === user.id)) {
      throw new AppError('CONFLICT', 'That wallet is already a member of this organization');
    }
    await provider(() => ports.directory.addMember(org.organizationId, user.id, role));
    await setTenantRole(em, org.tenant, user.id, role);
    return { ok: true as const, joined: true as const };
  });
}

async function inviteByEmail(
  ports: InvitationPorts,
  org: OrganizationActor,
  email: string,
  input: InviteInput,
): Promise<TeamInviteResultDto> {
  if (isPlaceholderEmail(email)) {
    // Wallet accounts' placeholder addresses have no mailbox: invite those by wallet.
    throw new AppError('BAD_REQUEST', 'email: not a deliverable address (invite wallet accounts by wallet)');
  }
  const organization = await provider(() => ports.directory.getOrganization(org.organizationId));
  // Under the organization lock, so that a demotion or removal of the inviter (which cancels what they may no
  // longer give) is either seen here or sees this invitation.
  const { invitation, inviter } = await withOrganizationLock(
    ports.em,
    ports.databaseKind,
    org.organizationId,
    async (em) => {
      const team = await loadTeam(em, ports.directory, org);
      const myRole = currentRole(team, org);
      requirePermission({ ...org, role: myRole }, 'manageTeam', MANAGE_TEAM);
      if (!canAssignRole(myRole, input.role)) {
        throw new AppError('FORBIDDEN', `A ${myRole} cannot give the role ${input.role}`);
      }
      if (team.some((e) => e.member.email.toLowerCase() === email)) {
        throw new AppError('CONFLICT', 'That address already belongs to a member of this organization');
      }
      await countInvitationMail(ports.invitationMailQuota, org);
      const created = await provider(() =>
        ports.directory.createInvitation({
          organizationId: org.organizationId,
          email,
          role: input.role,
          inviterUserId: org.userId,
        }),
      );
      return { invitation: created, inviter: team.find((e) => e.member.userId === org.userId)?.member };
    },
  );
  const mail = invitationMail({
    lang: pickMailLanguage(input.acceptLanguage, input.lang),
    to: email,
    organizationName: organization?.name ?? org.tenant.name,
    inviterName: displayName(inviter?.name, inviter?.email ?? org.email),
    role: invitation.role,
    invitationId: invitation.id,
    publicUrl: ports.publicUrl,
    expiresAt: invitation.expiresAt,
  });
  try {
    await ports.mailer.send(mail);
  } catch (e) {
    // An invitation nobody was told about would only linger: cancel it, so that a retry starts afresh.
    await ports.directory.cancelInvitation(invitation.id).catch(() => undefined);
    throw new AppError('BAD_GATEWAY', 'The invitation mail could not be sent', { cause: e });
  }
  return { ok: true as const };
}

/**
 * `POST /api/team/invitations/:invitationId/accept`: the signed-in user (acting in any tenant) joins the
 * invitation's organization with its role, at the provider and in the role table. Works once. Under the
 * organization lock the invitation is read again and its inviter re-checked: they must still be a member who
 * may give that role now (`inviterMayGrant`); otherwise the invitation is canceled and the answer is 403 (a
 * member removed or demoted since cannot bring anyone in through invitations sent before).
 * @throws AppError NOT_FOUND unknown invitation; GONE already accepted, canceled, rejected or expired, or the
 *   organization is gone; FORBIDDEN the caller's e-mail is not the invited one (wallet sessions have none), or
 *   the inviter may no longer give the role; BAD_GATEWAY provider error.
 */
export async function acceptTeamInvitation(
  ports: TeamPorts,
  actor: Actor,
  invitationId: string,
): Promise<InvitationAcceptedDto> {
  const found = await provider(() => ports.directory.getInvitation(invitationId));
  if (!found) throw new AppError('NOT_FOUND', 'No such invitation');
  return withOrganizationLock(ports.em, ports.databaseKind, found.organizationId, async (em) => {
    // Again under the lock: a renewal, a cancellation or the inviter's demotion may have happened meanwhile.
    const invitation = await provider(() => ports.directory.getInvitation(invitationId));
    if (!invitation) throw new AppError('NOT_FOUND', 'No such invitation');
    if (invitation.status !== 'pending') {
      throw new AppError('GONE', `This invitation was already ${invitation.status}`);
    }
    if (invitation.expiresAt.getTime() <= Date.now()) {
      throw new AppError('GONE', 'This invitation has expired');
    }
    // Before the inviter check: someone else holding the link must not be able to cancel it.
    if (actor.email === null || actor.email.toLowerCase() !== invitation.email.toLowerCase()) {
      throw new AppError('FORBIDDEN', 'This invitation is for another e-mail address: sign in with that one');
    }
    const organization = await provider(() => ports.directory.getOrganization(invitation.organizationId));
    if (!organization) throw new AppError('GONE', 'The organization of this invitation no longer exists');
    const tenant = await ensureOrganizationTenant(em, organization);
    const team = await loadTeam(em, ports.directory, { organizationId: organization.id, tenant });
    if (!inviterMayGrant(team, invitation.inviterUserId, invitation.role)) {
      await provider(() => ports.directory.cancelInvitation(invitation.id));
      throw new AppError(
        'FORBIDDEN',
        `Whoever invited you can no longer give the role ${invitation.role} in this organization, so the ` +
          'invitation was canceled: ask an admin of the organization for a new one',
      );
    }
    const joined = await provider(() => ports.directory.acceptInvitation(invitationId, actor.userId));
    await setTenantRole(em, tenant, actor.userId, joined.role);
    return { ok: true as const, organizationId: joined.organizationId, role: joined.role };
  });
}

/**
 * `PATCH /api/team/members/:userId`: gives a member another role (admin, editor or reader), at the provider
 * first, then in the role table. The caller needs manageTeam, may not manage a member above their own role
 * nor give a role above it; the last owner cannot be demoted. Changing one's own role follows the same rules.
 * The member's pending invitations that the new role could not give are canceled first
 * (`cancelInvitationsNoLongerGrantable`).
 * @throws AppError BAD_REQUEST `No active organization`; FORBIDDEN (role rules); NOT_FOUND not a member;
 *   CONFLICT the last owner; BAD_GATEWAY provider error (the role table is left unchanged).
 */
export async function changeMemberRole(
  ports: TeamPorts,
  actor: Actor,
  userId: string,
  role: AssignableRole,
): Promise<MemberRoleChangedDto> {
  const org = requireOrganization(actor);
  requirePermission(org, 'manageTeam', MANAGE_TEAM);
  return withOrganizationLock(ports.em, ports.databaseKind, org.organizationId, async (em) => {
    const team = await loadTeam(em, ports.directory, org);
    const myRole = currentRole(team, org);
    requirePermission({ ...org, role: myRole }, 'manageTeam', MANAGE_TEAM);
    const target = team.find((e) => e.member.userId === userId)?.member;
    if (!target) throw new AppError('NOT_FOUND', 'No such member in this organization');
    if (!canManageMember(myRole, target.role)) {
      throw new AppError('FORBIDDEN', `A ${myRole} cannot manage a ${target.role}`);
    }
    if (!canAssignRole(myRole, role)) {
      throw new AppError('FORBIDDEN', `A ${myRole} cannot give the role ${role}`);
    }
    if (target.role === 'owner' && ownerCount(team) <= 1) {
      throw new AppError('CONFLICT', 'The last owner cannot be demoted');
    }
    if (target.role !== role) {
      // Invitations first: if the provider then fails, the member keeps the role with fewer invitations out,
      // never the other way round.
      await cancelInvitationsNoLongerGrantable(ports.directory, org.organizationId, [{ userId, role }]);
      await provider(() => ports.directory.setMemberRole(org.organizationId, userId, role));
      await setTenantRole(em, org.tenant, userId, role);
    }
    return { ok: true as const, role };
  });
}

/**
 * `DELETE /api/team/members/:userId`: removes a member, at the provider first, then from the role table.
 * Removing someone else needs manageTeam and a target not above the caller's role; removing oneself
 * (leaving) is allowed for every role. The last owner can be neither removed nor leave. Every pending
 * invitation the member sent is canceled first.
 * @throws AppError BAD_REQUEST `No active organization`; FORBIDDEN (role rules); NOT_FOUND not a member;
 *   CONFLICT the last owner; BAD_GATEWAY provider error (the role table is left unchanged).
 */
export async function removeTeamMember(ports: TeamPorts, actor: Actor, userId: string): Promise<TeamOkDto> {
  const org = requireOrganization(actor);
  const leaving = userId === org.userId;
  if (!leaving) requirePermission(org, 'manageTeam', MANAGE_TEAM);
  return withOrganizationLock(ports.em, ports.databaseKind, org.organizationId, async (em) => {
    const team = await loadTeam(em, ports.directory, org);
    const myRole = currentRole(team, org);
    if (!leaving) requirePermission({ ...org, role: myRole }, 'manageTeam', MANAGE_TEAM);
    const target = team.find((e) => e.member.userId === userId)?.member;
    if (!target) throw new AppError('NOT_FOUND', 'No such member in this organization');
    if (!leaving && !canManageMember(myRole, target.role)) {
      throw new AppError('FORBIDDEN', `A ${myRole} cannot remove a ${target.role}`);
    }
    if (target.role === 'owner' && ownerCount(team) <= 1) {
      throw new AppError('CONFLICT', 'The last owner cannot be removed');
    }
    await cancelInvitationsNoLongerGrantable(ports.directory, org.organizationId, [{ userId, role: null }]);
    await provider(() => ports.directory.removeMember(org.organizationId, userId));
    await em.nativeDelete(TenantMember, { tenant: org.tenant.id, userId });
    return { ok: true as const };
  });
}

/**
 * `DELETE /api/team/invitations/:invitationId`: cancels a pending invitation of the caller's organization.
 * Admin or owner, and not an invitation for a role above the caller's.
 * @throws AppError BAD_REQUEST `No active organization`; FORBIDDEN (role rules); NOT_FOUND unknown, not
 *   pending any more, or another organization's invitation; BAD_GATEWAY provider error.
 */
export async function cancelTeamInvitation(
  ports: TeamPorts,
  actor: Actor,
  invitationId: string,
): Promise<TeamOkDto> {
  const org = requireOrganization(actor);
  requirePermission(org, 'manageTeam', MANAGE_TEAM);
  const invitation = await provider(() => ports.directory.getInvitation(invitationId));
  if (!invitation || invitation.organizationId !== org.organizationId || invitation.status !== 'pending') {
    throw new AppError('NOT_FOUND', 'No such pending invitation in this organization');
  }
  if (!canManageMember(org.role, invitation.role)) {
    throw new AppError('FORBIDDEN', `A ${org.role} cannot cancel an invitation for ${invitation.role}`);
  }
  await provider(() => ports.directory.cancelInvitation(invitationId));
  return { ok: true as const };
}
