import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import { AppError, type Role } from '@notary/shared';
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

/**
 * Serial prefix of a personal workspace: `U` plus 5 Crockford base32 characters of SHA-256(userId). Derived,
 * never from the e-mail: serials are public and must not reveal who owns a workspace.
 */
export function personalSerialPrefix(userId: string): string {
  const digest = createHash('sha256').update(userId).digest();
  return `U${toCrockford(digest).slice(0, 5)}`;
}

/** Serial prefix of an organization: its slug upper-cased, letters and digits only, 2 to 8 characters. */
export function organizationSerialPrefix(slug: string): string {
  const cleaned = slug
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, '')
    .slice(0, 8);
  return cleaned.length >= 2 ? cleaned : `${cleaned}ORG`.slice(0, 3);
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Crockford base32 of `bytes` (5 bits per character, most significant first). */
export function toCrockford(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += CROCKFORD[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += CROCKFORD[(buffer << (5 - bits)) & 31];
  return out;
}

/**
 * Finds or creates the personal workspace tenant of `userId` (race-safe: insert-if-absent, then read).
 */
export async function ensurePersonalTenant(
  em: EntityManager,
  userId: string,
  name: string,
): Promise<TenantEntity> {
  // Read first: every authenticated request lands here, and the row exists after the first one.
  const existing = await em.findOne(Tenant, { kind: 'personal', externalId: userId });
  if (existing) return existing;
  await em.upsert(
    Tenant,
    {
      kind: 'personal',
      externalId: userId,
      name,
      serialPrefix: personalSerialPrefix(userId),
      id: crypto.randomUUID(),
    },
    { onConflictFields: ['kind', 'externalId'], onConflictAction: 'ignore' },
  );
  return em.findOneOrFail(Tenant, { kind: 'personal', externalId: userId });
}

/** Finds or creates the tenant of organization `organizationId`. */
export async function ensureOrganizationTenant(
  em: EntityManager,
  organization: { id: string; name: string; slug: string },
): Promise<TenantEntity> {
  await em.upsert(
    Tenant,
    {
      kind: 'organization',
      externalId: organization.id,
      name: organization.name,
      serialPrefix: organizationSerialPrefix(organization.slug),
      id: crypto.randomUUID(),
    },
    { onConflictFields: ['kind', 'externalId'], onConflictAction: 'ignore' },
  );
  return em.findOneOrFail(Tenant, { kind: 'organization', externalId: organization.id });
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
 * Resolves the tenant and role of a verified session (spec, Authentication 1-2).
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
