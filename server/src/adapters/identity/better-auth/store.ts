/**
 * better-auth's tables as its database adapter returns them, and the reads the directory, the organization
 * guard and the admin share (paged `findMany`, organization and member look-ups, owner count, role parsing).
 *
 * Tables (schema `auth`): `organization` (`metadata` is a JSON string; `description` lives there),
 * `member` (`role` is a string, possibly several comma-separated roles), `invitation`
 * (`status` pending | accepted | canceled | rejected), `walletAddress` (SIWE), `user`, `session`
 * (`activeOrganizationId`).
 */

import { AppError, errorMessage, isRole, ROLE_RANK, type Role } from '@notary/shared';
import type { DBAdapter } from 'better-auth';

/** Rows read per page: better-auth's `findMany` silently stops at 100 rows unless told otherwise. */
export const PAGE_SIZE = 1000;

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

/** better-auth's stored rows, as the adapter returns them (dates may still be strings on some drivers). */
export interface OrganizationRow {
  id: string;
  name: string;
  slug: string;
  metadata?: string | Record<string, unknown> | null;
  createdAt: Date | string;
}

export interface MemberRow {
  id: string;
  organizationId: string;
  userId: string;
  role: string;
  createdAt: Date | string;
}

export interface InvitationRow {
  id: string;
  organizationId: string;
  email: string;
  role: string | null;
  status: string;
  inviterId: string;
  createdAt: Date | string;
  expiresAt: Date | string;
}

export interface UserRow {
  id: string;
  email: string;
  name: string;
  image?: string | null;
}

export interface WalletAddressRow {
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

export type Where = NonNullable<Parameters<DBAdapter['findMany']>[0]['where']>;

export function toDate(value: Date | string): Date {
  return value instanceof Date ? value : new Date(value);
}

export function requireRole(role: unknown): Role {
  // better-auth stores any string as a role (even undefined on server calls): only the service's roles.
  if (!isRole(role)) throw new AppError('BAD_REQUEST', `Invalid role: ${String(role)}`);
  return role;
}

/** Runs a provider operation: AppErrors pass through, anything else becomes BAD_GATEWAY. */
export async function provider<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof AppError) throw e;
    const reason = errorMessage(e);
    throw new AppError('BAD_GATEWAY', `Identity provider failed to ${what}: ${reason}`, { cause: e });
  }
}

/** Every row of `model` matching `where`, read page by page (stable order by id). */
export async function findAll<T>(adapter: DirectoryAdapter, model: string, where: Where): Promise<T[]> {
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

export const byId = (id: string): Where => [{ field: 'id', value: id }];

export async function findOrganization(
  adapter: DirectoryAdapter,
  organizationId: string,
): Promise<OrganizationRow | null> {
  return adapter.findOne<OrganizationRow>({ model: 'organization', where: byId(organizationId) });
}

export async function requireOrganization(
  adapter: DirectoryAdapter,
  organizationId: string,
): Promise<OrganizationRow> {
  const org = await findOrganization(adapter, organizationId);
  if (!org) throw new AppError('NOT_FOUND', `No organization ${organizationId}`);
  return org;
}

export async function findMemberRow(
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
export async function countOwners(adapter: DirectoryAdapter, organizationId: string): Promise<number> {
  const rows = await findAll<MemberRow>(adapter, 'member', [
    { field: 'organizationId', value: organizationId },
    { field: 'role', value: 'owner', operator: 'contains' },
  ]);
  return rows.filter((m) => bestRole(m.role) === 'owner').length;
}
