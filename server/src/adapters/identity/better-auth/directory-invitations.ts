/**
 * The invitation part of the better-auth `OrganizationDirectory`: create (or renew) a pending invitation,
 * list, read, cancel and accept one. Status changes are guarded transitions (`incrementOne` on
 * `status = 'pending'`), so of two concurrent cancels or accepts one wins. Mail is the service's job.
 */
import { AppError, ROLE_RANK, type Role } from '@notary/shared';
import type { DirectoryInvitation, OrganizationDirectory } from '../../../ports/directory';
import { isPlaceholderEmail } from '../../../ports/mail';
import type { DirectoryContext } from './directory-context';
import { INVITATION_TTL_SECONDS } from './organizations';
import {
  bestRole,
  byId,
  findAll,
  findMemberRow,
  findOrganization,
  type InvitationRow,
  provider,
  requireOrganization,
  requireRole,
  toDate,
  type UserRow,
} from './store';

const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const INVITATION_STATUSES = ['pending', 'accepted', 'canceled', 'rejected'] as const;

/** null when the stored role is none of the service's (never created by the service: ignored). */
function toInvitation(row: InvitationRow): DirectoryInvitation | null {
  const role = bestRole(row.role);
  const status = INVITATION_STATUSES.find((s) => s === row.status);
  if (!role || !status) return null;
  return {
    id: row.id,
    organizationId: row.organizationId,
    email: row.email,
    role,
    inviterUserId: row.inviterId,
    createdAt: toDate(row.createdAt),
    expiresAt: toDate(row.expiresAt),
    status,
  };
}

/** `createInvitation`, `listInvitations`, `getInvitation`, `cancelInvitation`, `acceptInvitation`. */
export function invitationMethods(
  input: DirectoryContext,
): Pick<
  OrganizationDirectory,
  'createInvitation' | 'listInvitations' | 'getInvitation' | 'cancelInvitation' | 'acceptInvitation'
> {
  const { events, now } = input;
  return {
    createInvitation: ({ organizationId, email, role, inviterUserId }) =>
      provider('create the invitation', async () => {
        const invitedRole = requireRole(role);
        const normalized = email.trim().toLowerCase();
        if (!EMAIL_PATTERN.test(normalized) || isPlaceholderEmail(normalized)) {
          throw new AppError('BAD_REQUEST', `Invalid e-mail: ${email}`);
        }
        const adapter = await input.adapter();
        await requireOrganization(adapter, organizationId);
        const invitee = await adapter.findOne<UserRow>({
          model: 'user',
          where: [{ field: 'email', value: normalized, mode: 'insensitive' }],
        });
        if (invitee && (await findMemberRow(adapter, organizationId, invitee.id))) {
          throw new AppError('CONFLICT', `${normalized} is already a member of ${organizationId}`);
        }
        const expiresAt = new Date(now().getTime() + INVITATION_TTL_SECONDS * 1000);
        const pending = (
          await adapter.findMany<InvitationRow>({
            model: 'invitation',
            where: [
              { field: 'organizationId', value: organizationId },
              { field: 'email', value: normalized, mode: 'insensitive' },
              { field: 'status', value: 'pending' },
            ],
            limit: 100,
            sortBy: { field: 'createdAt', direction: 'desc' },
          })
        ).filter((i) => toDate(i.expiresAt) > now());
        const [current, ...stale] = pending;
        // Duplicates cannot come from here, but better-auth's own endpoint could have made some: one stays.
        for (const extra of stale) {
          await adapter.update({
            model: 'invitation',
            where: byId(extra.id),
            update: { status: 'canceled' },
          });
        }
        const fields = { role: invitedRole, inviterId: inviterUserId, expiresAt };
        const row = current
          ? await adapter.update<InvitationRow>({
              model: 'invitation',
              where: byId(current.id),
              update: fields,
            })
          : await adapter.create<Omit<InvitationRow, 'id'>, InvitationRow>({
              model: 'invitation',
              data: { organizationId, email: normalized, status: 'pending', createdAt: now(), ...fields },
            });
        const invitation = row ? toInvitation(row) : null;
        if (!invitation) throw new AppError('BAD_GATEWAY', 'Identity provider did not return the invitation');
        return invitation;
      }),

    listInvitations: (organizationId) =>
      provider('list invitations', async () => {
        const adapter = await input.adapter();
        await requireOrganization(adapter, organizationId);
        const rows = await findAll<InvitationRow>(adapter, 'invitation', [
          { field: 'organizationId', value: organizationId },
          { field: 'status', value: 'pending' },
        ]);
        const at = now();
        return rows
          .filter((r) => toDate(r.expiresAt) > at)
          .flatMap((r) => toInvitation(r) ?? [])
          .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
      }),

    getInvitation: (invitationId) =>
      provider('read the invitation', async () => {
        const row = await (await input.adapter()).findOne<InvitationRow>({
          model: 'invitation',
          where: byId(invitationId),
        });
        return row ? toInvitation(row) : null;
      }),

    cancelInvitation: (invitationId) =>
      provider('cancel the invitation', async () => {
        const adapter = await input.adapter();
        const row = await adapter.findOne<InvitationRow>({ model: 'invitation', where: byId(invitationId) });
        if (!row) throw new AppError('NOT_FOUND', `No invitation ${invitationId}`);
        if (row.status === 'canceled') return;
        if (row.status !== 'pending')
          throw new AppError('GONE', `Invitation ${invitationId} is ${row.status}`);
        const canceled = await adapter.incrementOne({
          model: 'invitation',
          where: [...byId(invitationId), { field: 'status', value: 'pending' }],
          increment: {},
          set: { status: 'canceled' },
        });
        if (!canceled) throw new AppError('GONE', `Invitation ${invitationId} is no longer pending`);
      }),

    acceptInvitation: (invitationId, userId) =>
      provider('accept the invitation', async () => {
        const adapter = await input.adapter();
        const row = await adapter.findOne<InvitationRow>({ model: 'invitation', where: byId(invitationId) });
        if (!row) throw new AppError('NOT_FOUND', `No invitation ${invitationId}`);
        if (row.status !== 'pending')
          throw new AppError('GONE', `Invitation ${invitationId} is ${row.status}`);
        if (toDate(row.expiresAt) <= now())
          throw new AppError('GONE', `Invitation ${invitationId} has expired`);
        const role = bestRole(row.role);
        if (!role) throw new AppError('GONE', `Invitation ${invitationId} carries no valid role`);
        const user = await adapter.findOne<UserRow>({ model: 'user', where: byId(userId) });
        if (!user) throw new AppError('NOT_FOUND', `No user ${userId}`);
        if (user.email.trim().toLowerCase() !== row.email.trim().toLowerCase()) {
          throw new AppError('FORBIDDEN', 'This invitation was sent to another e-mail address');
        }
        if (!(await findOrganization(adapter, row.organizationId))) {
          throw new AppError('GONE', `The organization of invitation ${invitationId} no longer exists`);
        }
        // Guarded transition: of two concurrent accepts, one wins.
        const accepted = await adapter.incrementOne({
          model: 'invitation',
          where: [...byId(invitationId), { field: 'status', value: 'pending' }],
          increment: {},
          set: { status: 'accepted' },
        });
        if (!accepted) throw new AppError('GONE', `Invitation ${invitationId} is no longer pending`);
        const organizationId = row.organizationId;
        let effective: Role = role;
        try {
          const existing = await findMemberRow(adapter, organizationId, userId);
          const current = bestRole(existing?.role);
          if (existing && current && ROLE_RANK[current] >= ROLE_RANK[role]) {
            // Already a member with this role or a higher one: an invitation never demotes.
            effective = current;
          } else if (existing) {
            await adapter.update({ model: 'member', where: byId(existing.id), update: { role } });
          } else {
            await adapter.create({
              model: 'member',
              data: { organizationId, userId, role, createdAt: now() },
            });
          }
        } catch (e) {
          await adapter.incrementOne({
            model: 'invitation',
            where: [...byId(invitationId), { field: 'status', value: 'accepted' }],
            increment: {},
            set: { status: 'pending' },
          });
          throw e;
        }
        await events.emit({ type: 'member.upserted', organizationId, userId, role: effective });
        return { organizationId, role: effective };
      }),
  };
}
