/**
 * `OrganizationDirectory` on better-auth 1.7.7 (organization and siwe plugins), plus the two pieces of the
 * better-auth configuration that keep its organization data consistent with the service:
 *
 * - `createOrganizationHooks`: the organization plugin's `organizationHooks`, reporting every membership
 *   change made through better-auth's own endpoints (HTTP or `auth.api.*`) as a `MembershipEvent`.
 * - `createOrganizationGuard`: `hooks.before`/`hooks.after` that lock the plugin's HTTP endpoints down to
 *   what the service allows (see `ORGANIZATION_HTTP_ENDPOINTS`), validate organization creation and refuse
 *   the last owner's leaving.
 *
 * The directory works on better-auth's database adapter (`(await auth.$context).adapter`), never through
 * `auth.api.*`: those endpoints want a request session, and the service calls the directory as an operator
 * after doing its own authorization (spec role hierarchy). Because of that, each directory method emits its
 * own events after it succeeded.
 *
 * Tables (schema `auth`): `organization` (`metadata` is a JSON string; `description` lives there),
 * `member` (`role` is a string, possibly several comma-separated roles), `invitation`
 * (`status` pending | accepted | canceled | rejected), `walletAddress` (SIWE), `user`, `session`
 * (`activeOrganizationId`).
 *
 * On PGlite, do not call the directory from inside `em.transactional`: it uses its own connection, which
 * waits for the transaction's (deadlock).
 */
import { AppError, isRole, ROLE_RANK, type Role } from '@notary/shared';
import { APIError, type DBAdapter } from 'better-auth';
import { createAuthMiddleware } from 'better-auth/api';
import type { OrganizationOptions } from 'better-auth/plugins/organization';
import { isPlaceholderEmail } from '../mail/placeholder';
import type {
  DirectoryInvitation,
  DirectoryMember,
  DirectoryOrganization,
  MembershipEvent,
  OrganizationDirectory,
} from './directory';

/** Lifetime of an invitation, seconds (7 days); renewing a pending one restarts it. */
export const INVITATION_TTL_SECONDS = 7 * 24 * 3600;
/** Longest organization name accepted (spec, org profile: 1 to 120 characters). */
export const ORGANIZATION_NAME_MAX = 120;
/** Longest organization description accepted (spec, org profile: up to 500 characters). */
export const ORGANIZATION_DESCRIPTION_MAX = 500;
/** Lower-case URL slug: letters, digits and inner hyphens, 1 to 64 characters. */
export const SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;
/** Rows read per page: better-auth's `findMany` silently stops at 100 rows unless told otherwise. */
const PAGE_SIZE = 1000;
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const WALLET_PATTERN = /^0x[0-9a-fA-F]{40}$/;

/**
 * better-auth organization endpoints reachable over HTTP (`/api/auth<path>`). Every other path under
 * `/organization/` answers 404 `{message, code: "NOT_FOUND"}` when requested over HTTP (the service's
 * `/api/team/*` and `/api/org/*` routes replace them, with the spec's role hierarchy); server-side
 * `auth.api.*` calls are not affected.
 */
export const ORGANIZATION_HTTP_ENDPOINTS: ReadonlySet<string> = new Set([
  '/organization/create', // any signed-in user; the creator becomes owner (validated, see the guard)
  '/organization/set-active', // members only (checked by better-auth)
  '/organization/list', // the caller's own organizations
  '/organization/get-full-organization', // members only, read only, without its invitations
  '/organization/list-members', // members only, read only
  '/organization/leave', // not the last owner
]);

/**
 * The organization endpoint an HTTP request path names when the guard must refuse it, else null. The path is
 * compared loosely (percent-decoded, lower-cased, repeated and trailing slashes dropped), so that spellings
 * better-auth's router would not route get the same 404 body as the endpoints it would. `basePath` is
 * better-auth's mount point (`/api/auth`).
 */
export function blockedOrganizationPath(url: string, basePath: string): string | null {
  const raw = url.split(/[?#]/, 1)[0] ?? '';
  let decoded = raw;
  try {
    decoded = decodeURIComponent(raw);
  } catch {
    // Malformed escapes: compare the raw text.
  }
  const path = decoded.toLowerCase().replace(/\/+/g, '/').replace(/\/+$/, '');
  const base = basePath.toLowerCase().replace(/\/+$/, '');
  if (!path.startsWith(`${base}/organization`)) return null;
  const endpoint = path.slice(base.length);
  if (endpoint !== '/organization' && !endpoint.startsWith('/organization/')) return null;
  return ORGANIZATION_HTTP_ENDPOINTS.has(endpoint) ? null : endpoint;
}

/** Body of the guard's refusal of an organization endpoint (404). */
export function blockedOrganizationBody(endpoint: string): { message: string; code: 'NOT_FOUND' } {
  return {
    message: `${endpoint} is not available: manage teams through /api/team and organizations through /api/org`,
    code: 'NOT_FOUND',
  };
}

/** Highest-ranked service role in a better-auth role string (it stores several roles comma-separated). */
export function bestRole(stored: unknown): Role | null {
  if (typeof stored !== 'string') return null;
  let best: Role | null = null;
  for (const part of stored.split(',')) {
    const role = part.trim();
    if (isRole(role) && (best === null || ROLE_RANK[role] > ROLE_RANK[best])) best = role;
  }
  return best;
}

export type MembershipListener = (event: MembershipEvent) => Promise<void> | void;

/**
 * Fan-out of membership events to the subscribed listeners, in subscription order, each awaited. A listener
 * that throws (or rejects) is logged through `logError` and skipped: it never fails the provider call that
 * produced the event.
 */
export class MembershipEventHub {
  private readonly listeners: MembershipListener[] = [];

  constructor(private readonly logError: (message: string, error: unknown) => void) {}

  subscribe(listener: MembershipListener): void {
    this.listeners.push(listener);
  }

  async emit(event: MembershipEvent): Promise<void> {
    for (const listener of this.listeners) {
      try {
        await listener(event);
      } catch (e) {
        this.logError(`membership event listener failed on ${event.type} (${JSON.stringify(event)})`, e);
      }
    }
  }
}

/** better-auth's stored rows, as the adapter returns them (dates may still be strings on some drivers). */
interface OrganizationRow {
  id: string;
  name: string;
  slug: string;
  metadata?: string | Record<string, unknown> | null;
  createdAt: Date | string;
}

interface MemberRow {
  id: string;
  organizationId: string;
  userId: string;
  role: string;
  createdAt: Date | string;
}

interface InvitationRow {
  id: string;
  organizationId: string;
  email: string;
  role: string | null;
  status: string;
  inviterId: string;
  createdAt: Date | string;
  expiresAt: Date | string;
}

interface UserRow {
  id: string;
  email: string;
  name: string;
  image?: string | null;
}

interface WalletAddressRow {
  id: string;
  userId: string;
  address: string;
  chainId: number;
  isPrimary?: boolean | null;
  createdAt: Date | string;
}

/**
 * The part of better-auth's database adapter used here (the methods do not depend on the options type, so
 * the instance's `DBAdapter<Options>` fits).
 */
export type DirectoryAdapter = Pick<
  DBAdapter,
  'findOne' | 'findMany' | 'create' | 'update' | 'updateMany' | 'delete' | 'deleteMany' | 'incrementOne'
>;

type Where = NonNullable<Parameters<DBAdapter['findMany']>[0]['where']>;

function toDate(value: Date | string): Date {
  return value instanceof Date ? value : new Date(value);
}

/** The organization's metadata as an object (better-auth stores a JSON string; anything unreadable is `{}`). */
function parseMetadata(value: OrganizationRow['metadata']): Record<string, unknown> {
  if (value && typeof value === 'object') return value;
  if (typeof value !== 'string' || value === '') return {};
  try {
    const parsed: unknown = JSON.parse(value);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

function toOrganization(row: OrganizationRow): DirectoryOrganization {
  const description = parseMetadata(row.metadata).description;
  return {
    id: row.id,
    name: row.name,
    slug: row.slug,
    description: typeof description === 'string' ? description : '',
    createdAt: toDate(row.createdAt),
  };
}

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

function requireRole(role: unknown): Role {
  // better-auth stores any string as a role (even undefined on server calls): only the service's roles.
  if (!isRole(role)) throw new AppError('BAD_REQUEST', `Invalid role: ${String(role)}`);
  return role;
}

/** Runs a provider operation: AppErrors pass through, anything else becomes BAD_GATEWAY. */
async function provider<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof AppError) throw e;
    const reason = e instanceof Error ? e.message : String(e);
    throw new AppError('BAD_GATEWAY', `Identity provider failed to ${what}: ${reason}`, { cause: e });
  }
}

/** Every row of `model` matching `where`, read page by page (stable order by id). */
async function findAll<T>(adapter: DirectoryAdapter, model: string, where: Where): Promise<T[]> {
  const rows: T[] = [];
  for (let offset = 0; ; offset += PAGE_SIZE) {
    const page = await adapter.findMany<T>({
      model,
      where,
      limit: PAGE_SIZE,
      offset,
      sortBy: { field: 'id', direction: 'asc' },
    });
    rows.push(...page);
    if (page.length < PAGE_SIZE) return rows;
  }
}

const byId = (id: string): Where => [{ field: 'id', value: id }];

async function findOrganization(
  adapter: DirectoryAdapter,
  organizationId: string,
): Promise<OrganizationRow | null> {
  return adapter.findOne<OrganizationRow>({ model: 'organization', where: byId(organizationId) });
}

async function requireOrganization(
  adapter: DirectoryAdapter,
  organizationId: string,
): Promise<OrganizationRow> {
  const org = await findOrganization(adapter, organizationId);
  if (!org) throw new AppError('NOT_FOUND', `No organization ${organizationId}`);
  return org;
}

async function findMemberRow(
  adapter: DirectoryAdapter,
  organizationId: string,
  userId: string,
): Promise<MemberRow | null> {
  return adapter.findOne<MemberRow>({
    model: 'member',
    where: [
      { field: 'organizationId', value: organizationId },
      { field: 'userId', value: userId },
    ],
  });
}

/** Members of `organizationId` whose best role is owner. */
async function countOwners(adapter: DirectoryAdapter, organizationId: string): Promise<number> {
  const rows = await findAll<MemberRow>(adapter, 'member', [
    { field: 'organizationId', value: organizationId },
    { field: 'role', value: 'owner', operator: 'contains' },
  ]);
  return rows.filter((m) => bestRole(m.role) === 'owner').length;
}

/**
 * The directory on better-auth's adapter. `adapter` resolves better-auth's database adapter
 * (`(await auth.$context).adapter`); `events` receives the membership events of every successful change.
 *
 * Errors: AppError NOT_FOUND (unknown organization, user, member or invitation), BAD_REQUEST (a role that
 * is not one of the service's, a malformed e-mail or wallet address, an empty name), CONFLICT (adding a
 * member twice, inviting a member), GONE and FORBIDDEN (`acceptInvitation`), BAD_GATEWAY (the provider's
 * database failed).
 */
export function createBetterAuthDirectory(input: {
  adapter: () => Promise<DirectoryAdapter>;
  events: MembershipEventHub;
}): OrganizationDirectory {
  const { events } = input;
  const now = () => new Date();

  const directory: OrganizationDirectory = {
    getOrganization: (organizationId) =>
      provider('read the organization', async () => {
        const row = await findOrganization(await input.adapter(), organizationId);
        return row ? toOrganization(row) : null;
      }),

    listOrganizations: () =>
      provider('list organizations', async () => {
        const rows = await findAll<OrganizationRow>(await input.adapter(), 'organization', []);
        return rows.map(toOrganization).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
      }),

    updateOrganization: (organizationId, patch) =>
      provider('update the organization', async () => {
        const adapter = await input.adapter();
        const org = await requireOrganization(adapter, organizationId);
        const update: Record<string, unknown> = {};
        if (patch.name !== undefined) {
          const name = patch.name.trim();
          if (name === '') throw new AppError('BAD_REQUEST', 'Organization name is empty');
          update.name = name;
        }
        if (patch.description !== undefined) {
          update.metadata = JSON.stringify({
            ...parseMetadata(org.metadata),
            description: patch.description,
          });
        }
        if (Object.keys(update).length === 0) return;
        await adapter.update({ model: 'organization', where: byId(organizationId), update });
      }),

    deleteOrganization: (organizationId) =>
      provider('delete the organization', async () => {
        const adapter = await input.adapter();
        const org = await findOrganization(adapter, organizationId);
        // Children first (foreign keys), so that a retry after a partial failure finishes the job.
        const members = await adapter.deleteMany({
          model: 'member',
          where: [{ field: 'organizationId', value: organizationId }],
        });
        await adapter.deleteMany({
          model: 'invitation',
          where: [{ field: 'organizationId', value: organizationId }],
        });
        // Sessions pointing at it fall back to the personal workspace.
        await adapter.updateMany({
          model: 'session',
          where: [{ field: 'activeOrganizationId', value: organizationId }],
          update: { activeOrganizationId: null },
        });
        if (org) await adapter.delete({ model: 'organization', where: byId(organizationId) });
        if (org || members > 0) await events.emit({ type: 'organization.deleted', organizationId });
      }),

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

    onMembershipEvent(listener) {
      events.subscribe(listener);
    },
  };
  return directory;
}

/**
 * The organization plugin's `organizationHooks`: membership changes made by better-auth itself (its HTTP
 * endpoints, `auth.api.*` calls such as `IdentityAdmin.createOrganization`) become membership events.
 * Organization creation runs `afterAddMember` for the creator, so it reports `member.upserted` (owner) once.
 * A stored role that is none of the service's is reported as `member.removed` (it grants nothing).
 * `leave` runs no organization hook: `createOrganizationGuard`'s after hook reports it.
 */
export function createOrganizationHooks(
  events: MembershipEventHub,
): OrganizationOptions['organizationHooks'] {
  const upserted = async (member: { organizationId: string; userId: string; role: string }) => {
    const role = bestRole(member.role);
    await events.emit(
      role
        ? { type: 'member.upserted', organizationId: member.organizationId, userId: member.userId, role }
        : { type: 'member.removed', organizationId: member.organizationId, userId: member.userId },
    );
  };
  return {
    afterAddMember: ({ member }) => upserted(member),
    afterUpdateMemberRole: ({ member }) => upserted(member),
    afterAcceptInvitation: ({ member }) => upserted(member),
    afterRemoveMember: ({ member }) =>
      events.emit({ type: 'member.removed', organizationId: member.organizationId, userId: member.userId }),
    afterDeleteOrganization: ({ organization }) =>
      events.emit({ type: 'organization.deleted', organizationId: organization.id }),
  };
}

function refuse(status: 'BAD_REQUEST' | 'NOT_FOUND' | 'CONFLICT', message: string): never {
  throw new APIError(status, { message, code: status });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * better-auth `hooks` guarding the organization plugin's HTTP endpoints. They act only on requests that came
 * over HTTP (`ctx.request` set); `auth.api.*` calls made by the service pass untouched.
 *
 * - Any `/organization/*` endpoint outside `ORGANIZATION_HTTP_ENDPOINTS`: 404
 *   `{"message":"... is not available ...","code":"NOT_FOUND"}` (before the endpoint's own checks).
 * - `POST /organization/create` `{name, slug, metadata?: {description?}, logo?: null,
 *   keepCurrentActiveOrganization?}`: 400 `BAD_REQUEST` for a name outside 1..120 characters, a slug that is
 *   not lower-case letters, digits and inner hyphens (1..64), other metadata than a description of at most
 *   500 characters, a logo, or a `userId`; 409 `CONFLICT` when the slug is taken. The creator becomes owner.
 * - `POST /organization/leave` `{organizationId}`: 400 `BAD_REQUEST` "The last owner cannot leave ..." when
 *   the caller is the organization's only owner; on success the after hook reports `member.removed`.
 * - `GET /organization/get-full-organization`: answered with `invitations: []` (any member may read it; the
 *   invitations are for admins and owners, through `GET /api/team/invitations`).
 *
 * `sessionUserId` resolves the request's session (cookie or `Authorization: Bearer <session token>`) to its
 * user id: before hooks run ahead of the bearer plugin's, so the session must be read through `auth.api`.
 */
export function createOrganizationGuard(input: {
  events: MembershipEventHub;
  sessionUserId: (headers: Headers) => Promise<string | null>;
}) {
  const before = createAuthMiddleware(async (ctx) => {
    const path = ctx.path ?? '';
    if (!ctx.request || !path.startsWith('/organization/')) return;
    if (!ORGANIZATION_HTTP_ENDPOINTS.has(path)) refuse('NOT_FOUND', blockedOrganizationBody(path).message);
    const body: unknown = ctx.body;
    if (path === '/organization/create') {
      if (!isRecord(body)) return; // better-auth's own validation answers
      // Signed-in callers only (the endpoint answers 401 otherwise): nothing to learn about slugs before that.
      if (!(await input.sessionUserId(ctx.request.headers))) return;
      const { name, slug, metadata, logo, userId } = body;
      if (userId !== undefined)
        refuse('BAD_REQUEST', 'userId cannot be set: the caller creates the organization');
      if (logo !== undefined && logo !== null) refuse('BAD_REQUEST', 'Organization logos are not supported');
      if (typeof name !== 'string' || name.trim() === '' || name.trim().length > ORGANIZATION_NAME_MAX) {
        refuse('BAD_REQUEST', `Organization name must have 1 to ${ORGANIZATION_NAME_MAX} characters`);
      }
      if (typeof slug !== 'string' || !SLUG_PATTERN.test(slug)) {
        refuse('BAD_REQUEST', 'Invalid slug: 1 to 64 lower-case letters, digits and inner hyphens');
      }
      if (metadata !== undefined) {
        const keys = isRecord(metadata) ? Object.keys(metadata) : null;
        const description = isRecord(metadata) ? metadata.description : undefined;
        if (
          keys === null ||
          keys.some((k) => k !== 'description') ||
          (description !== undefined &&
            (typeof description !== 'string' || description.length > ORGANIZATION_DESCRIPTION_MAX))
        ) {
          refuse(
            'BAD_REQUEST',
            `metadata may only hold a description of at most ${ORGANIZATION_DESCRIPTION_MAX} characters`,
          );
        }
      }
      const taken = await ctx.context.adapter.findOne({
        model: 'organization',
        where: [{ field: 'slug', value: slug }],
      });
      if (taken) refuse('CONFLICT', `Organization slug "${slug}" is taken`);
      return;
    }
    if (path === '/organization/leave') {
      const organizationId = isRecord(body) ? body.organizationId : undefined;
      if (typeof organizationId !== 'string') return; // better-auth's own validation answers
      const userId = await input.sessionUserId(ctx.request.headers);
      if (!userId) return; // the endpoint answers 401
      const member = await findMemberRow(ctx.context.adapter, organizationId, userId);
      if (
        member &&
        bestRole(member.role) === 'owner' &&
        (await countOwners(ctx.context.adapter, organizationId)) <= 1
      ) {
        refuse(
          'BAD_REQUEST',
          'The last owner cannot leave the organization: make another member owner first, or delete the organization',
        );
      }
    }
  });

  const after = createAuthMiddleware(async (ctx) => {
    const returned: unknown = ctx.context.returned;
    if (returned instanceof APIError || !isRecord(returned)) return;
    if (ctx.path === '/organization/get-full-organization' && ctx.request) {
      // Any member may read it, but invitations (e-mails of people not yet members) are for admins and
      // owners only, through GET /api/team/invitations.
      return ctx.json({ ...returned, invitations: [] });
    }
    if (ctx.path !== '/organization/leave') return;
    const { organizationId, userId } = returned;
    if (typeof organizationId !== 'string' || typeof userId !== 'string') return;
    await input.events.emit({ type: 'member.removed', organizationId, userId });
  });

  return { before, after };
}
