/**
 * The membership part of the better-auth `OrganizationDirectory`: list members (with their user rows), set a
 * role, add and remove a member (the removed member's sessions leave the organization), and find the account
 * of a SIWE wallet. Each change emits its membership event (see `directory.ts`).
 */
import { AppError } from '@notary/shared';
import type { DirectoryMember, OrganizationDirectory } from '../../../ports/directory';
import { isPlaceholderEmail } from '../../../ports/mail';
import type { DirectoryContext } from './directory-context';
import {
  bestRole,
  byId,
  findAll,
  findMemberRow,
  type MemberRow,
  PAGE_SIZE,
  provider,
  requireOrganization,
  requireRole,
  toDate,
  type UserRow,
  type WalletAddressRow,
} from './store';

const WALLET_PATTERN = /^0x[0-9a-fA-F]{40}$/;

/** `listMembers`, `setMemberRole`, `addMember`, `removeMember`, `findUserByWallet`. */
export function memberMethods(
  input: DirectoryContext,
): Pick<
  OrganizationDirectory,
  'listMembers' | 'setMemberRole' | 'addMember' | 'removeMember' | 'findUserByWallet'
> {
  const { events, now } = input;
  return {
    listMembers: (organizationId) =>
      provider('list members', async () => {
        const adapter = await input.adapter();
        await requireOrganization(adapter, organizationId);
        const rows = await findAll<MemberRow>(adapter, 'member', [
          { field: 'organizationId', value: organizationId },
        ]);
        const users = new Map<string, UserRow>();
        const ids = [...new Set(rows.map((m) => m.userId))];
        for (let i = 0; i < ids.length; i += PAGE_SIZE) {
          const chunk = ids.slice(i, i + PAGE_SIZE);
          const found = await adapter.findMany<UserRow>({
            model: 'user',
            where: [{ field: 'id', value: chunk, operator: 'in' }],
            limit: chunk.length,
          });
          for (const u of found) users.set(u.id, u);
        }
        const members: DirectoryMember[] = [];
        for (const row of rows) {
          const role = bestRole(row.role);
          const user = users.get(row.userId);
          // A role the service does not know grants nothing (as in getMembership): not listed.
          if (!role || !user) continue;
          members.push({
            userId: user.id,
            email: user.email,
            name: user.name,
            imageUrl: user.image ?? '',
            role,
            joinedAt: toDate(row.createdAt),
          });
        }
        return members.sort((a, b) => a.joinedAt.getTime() - b.joinedAt.getTime());
      }),

    setMemberRole: (organizationId, userId, role) =>
      provider('change the member role', async () => {
        const newRole = requireRole(role);
        const adapter = await input.adapter();
        await requireOrganization(adapter, organizationId);
        const member = await findMemberRow(adapter, organizationId, userId);
        if (!member) throw new AppError('NOT_FOUND', `User ${userId} is not a member of ${organizationId}`);
        if (member.role !== newRole) {
          await adapter.update({ model: 'member', where: byId(member.id), update: { role: newRole } });
        }
        await events.emit({ type: 'member.upserted', organizationId, userId, role: newRole });
      }),

    addMember: (organizationId, userId, role) =>
      provider('add the member', async () => {
        const newRole = requireRole(role);
        const adapter = await input.adapter();
        await requireOrganization(adapter, organizationId);
        const user = await adapter.findOne<UserRow>({ model: 'user', where: byId(userId) });
        if (!user) throw new AppError('NOT_FOUND', `No user ${userId}`);
        if (await findMemberRow(adapter, organizationId, userId)) {
          throw new AppError('CONFLICT', `User ${userId} is already a member of ${organizationId}`);
        }
        await adapter.create({
          model: 'member',
          data: { organizationId, userId, role: newRole, createdAt: now() },
        });
        await events.emit({ type: 'member.upserted', organizationId, userId, role: newRole });
      }),

    removeMember: (organizationId, userId) =>
      provider('remove the member', async () => {
        const adapter = await input.adapter();
        const member = await findMemberRow(adapter, organizationId, userId);
        if (!member) throw new AppError('NOT_FOUND', `User ${userId} is not a member of ${organizationId}`);
        await adapter.delete({ model: 'member', where: byId(member.id) });
        await adapter.updateMany({
          model: 'session',
          where: [
            { field: 'userId', value: userId },
            { field: 'activeOrganizationId', value: organizationId },
          ],
          update: { activeOrganizationId: null },
        });
        await events.emit({ type: 'member.removed', organizationId, userId });
      }),

    findUserByWallet: (address) =>
      provider('look up the wallet', async () => {
        const trimmed = address.trim();
        if (!WALLET_PATTERN.test(trimmed))
          throw new AppError('BAD_REQUEST', `Invalid wallet address: ${address}`);
        const adapter = await input.adapter();
        const wallets = await adapter.findMany<WalletAddressRow>({
          model: 'walletAddress',
          where: [{ field: 'address', value: trimmed, mode: 'insensitive' }],
          limit: 100,
        });
        // One address may be linked on several chains; they all name one user in practice. Primary first.
        wallets.sort((a, b) => Number(Boolean(b.isPrimary)) - Number(Boolean(a.isPrimary)));
        for (const wallet of wallets) {
          const user = await adapter.findOne<UserRow>({ model: 'user', where: byId(wallet.userId) });
          if (user) return { id: user.id, email: isPlaceholderEmail(user.email) ? null : user.email };
        }
        return null;
      }),
  };
}
