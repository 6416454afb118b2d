import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import {
  AppError,
  CROCKFORD_ALPHABET,
  isPersonalSerialPrefixForm,
  organizationPrefixReservation,
  organizationSerialPrefix,
  type Role,
  serialPrefixKey,
} from '@notary/shared';
import { Tenant, type TenantEntity, TenantMember } from '../../db/entities';
import type { SessionClaims } from '../../ports/identity';

/** What the identity provider says about a membership, used to reconcile the service's role table. */
export interface MembershipLookup {
  /** The user's membership of `organizationId` at the provider, or null when not a member. */
  getMembership(
    organizationId: string,
    userId: string,
  ): Promise<{ role: Role; organizationName: string; organizationSlug: string } | null>;
}

export { organizationSerialPrefix };

/**
 * Serial prefix of a personal workspace: `U` plus 5 Crockford base32 characters of SHA-256(userId). Derived,
 * never from the e-mail: serials are public and must not reveal who owns a workspace.
 */
export function personalSerialPrefix(userId: string): string {
  return personalSerialPrefixCandidates(userId)[0] as string;
}

/**
 * The prefixes a personal workspace may get, in order: `U` plus the first 5, then 6, ... 11 Crockford
 * characters of SHA-256(userId). Five characters (25 bits) collide among a few thousand users: the next
 * candidate, one character longer, keeps the workspace's prefix unique and still derived from its user only.
 */
export function personalSerialPrefixCandidates(userId: string): string[] {
  const digest = toCrockford(createHash('sha256').update(userId).digest());
  return [5, 6, 7, 8, 9, 10, 11].map((n) => `U${digest.slice(0, n)}`);
}

/**
 * The prefixes an organization's tenant may get, in order (docs/api.md, Serial numbers): the one its slug gives
 * (`organizationSerialPrefix`) unless reserved (`organizationPrefixReservation`); then 10-character forms that
 * keep the slug's prefix readable: its first 8 characters and Crockford characters of SHA-256 of the
 * organization id (a slug's own prefix has at most 8, so these never equal one); then `T` and 9 such
 * characters (for a slug whose every extension is reserved). Deterministic: every instance creating the same
 * organization's tenant tries the same prefixes. Reserved candidates are left out, and so are the 10-character
 * ones with the shape of any personal workspace's (`isPersonalSerialPrefixForm`).
 */
export function organizationSerialPrefixCandidates(organization: { id: string; slug: string }): string[] {
  const own = organizationSerialPrefix(organization.slug);
  const digest = toCrockford(createHash('sha256').update(`serial-prefix:${organization.id}`).digest());
  const head = own.slice(0, 8);
  const candidates = [own];
  for (let i = 0; i < 6; i++) {
    const n = 10 - head.length;
    candidates.push(`${head}${digest.slice(i * n, i * n + n)}`);
  }
  for (let i = 0; i < 4; i++) candidates.push(`T${digest.slice(i * 9, i * 9 + 9)}`);
  return candidates.filter(
    (c) => organizationPrefixReservation(c) === undefined && !isPersonalSerialPrefixForm(c),
  );
}

/** Crockford base32 of `bytes` (5 bits per character, most significant first). */
export function toCrockford(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += CROCKFORD_ALPHABET[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += CROCKFORD_ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

/**
 * Creates the tenant `(kind, externalId)` with the first of `candidates` whose key (`serialPrefixKey`) no
 * tenant holds, or returns the tenant when it exists (created meanwhile by another request or instance).
 * Race-safe without failing a statement (a failed statement would abort the caller's transaction): keys
 * already held are skipped after one indexed read, and the insert does nothing on any conflict; a key taken
 * between the read and the insert moves on to the next candidate.
 * @throws AppError CONFLICT when every candidate is held (not expected: see the candidate lists).
 */
async function createTenant(
  em: EntityManager,
  row: { kind: 'personal' | 'organization'; externalId: string; name: string },
  candidates: readonly string[],
): Promise<TenantEntity> {
  const sql = em as SqlEntityManager;
  for (const prefix of candidates) {
    const key = serialPrefixKey(prefix);
    if ((await em.count(Tenant, { serialPrefixKey: key })) > 0) continue;
    await sql.execute(
      `insert into tenant (id, kind, external_id, name, serial_prefix, serial_prefix_key, created_at)
       values (?, ?, ?, ?, ?, ?, ?) on conflict do nothing`,
      [crypto.randomUUID(), row.kind, row.externalId, row.name, prefix, key, new Date()],
    );
    const created = await em.findOne(Tenant, { kind: row.kind, externalId: row.externalId });
    if (created) return created;
  }
  const existing = await em.findOne(Tenant, { kind: row.kind, externalId: row.externalId });
  if (existing) return existing;
  throw new AppError('CONFLICT', `No free serial prefix for this ${row.kind} workspace`);
}

/**
 * Finds or creates the personal workspace tenant of `userId`, with the first free prefix of
 * `personalSerialPrefixCandidates` (race-safe, see `createTenant`).
 */
export async function ensurePersonalTenant(
  em: EntityManager,
  userId: string,
  name: string,
): Promise<TenantEntity> {
  // Read first: every authenticated request lands here, and the row exists after the first one.
  const existing = await em.findOne(Tenant, { kind: 'personal', externalId: userId });
  if (existing) return existing;
  return createTenant(
    em,
    { kind: 'personal', externalId: userId, name },
    personalSerialPrefixCandidates(userId),
  );
}

/**
 * Finds or creates the tenant of organization `organization.id`, with the first free prefix of
 * `organizationSerialPrefixCandidates` (race-safe, see `createTenant`). An existing tenant keeps its prefix.
 */
export async function ensureOrganizationTenant(
  em: EntityManager,
  organization: { id: string; name: string; slug: string },
): Promise<TenantEntity> {
  const existing = await em.findOne(Tenant, { kind: 'organization', externalId: organization.id });
  if (existing) return existing;
  return createTenant(
    em,
    { kind: 'organization', externalId: organization.id, name: organization.name },
    organizationSerialPrefixCandidates(organization),
  );
}

/** Sets `userId`'s role in `tenant` in the service's role table (insert or update). */
export async function setTenantRole(
  em: EntityManager,
  tenant: TenantEntity,
  userId: string,
  role: Role,
): Promise<void> {
  await em.upsert(
    TenantMember,
    { id: crypto.randomUUID(), tenant, userId, role },
    { onConflictFields: ['tenant', 'userId'], onConflictMergeFields: ['role', 'updatedAt'] },
  );
}

/**
 * Resolves the tenant and role of a verified session (spec, Authentication: items 1-2).
 * Personal workspace: always `owner`. Organization: the role in the service's role table; a membership the
 * table does not know yet is reconciled from the identity provider, and a user the provider no longer lists
 * loses access (the row is removed).
 * @throws AppError FORBIDDEN when the user is not a member of the token's organization.
 */
export async function resolveTenant(
  em: EntityManager,
  claims: SessionClaims,
  memberships: MembershipLookup,
): Promise<{ tenant: TenantEntity; role: Role }> {
  if (!claims.orgId) {
    const tenant = await ensurePersonalTenant(em, claims.userId, claims.email ?? 'Personal workspace');
    return { tenant, role: 'owner' };
  }
  const row = await em.findOne(
    TenantMember,
    { userId: claims.userId, tenant: { kind: 'organization', externalId: claims.orgId } },
    { populate: ['tenant'] },
  );
  if (row) return { tenant: row.tenant, role: row.role };
  const membership = await memberships.getMembership(claims.orgId, claims.userId);
  if (!membership) throw new AppError('FORBIDDEN', 'You are not a member of this organization');
  const tenant = await ensureOrganizationTenant(em, {
    id: claims.orgId,
    name: membership.organizationName,
    slug: membership.organizationSlug,
  });
  await setTenantRole(em, tenant, claims.userId, membership.role);
  return { tenant, role: membership.role };
}
