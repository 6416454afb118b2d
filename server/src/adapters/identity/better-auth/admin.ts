/**
 * Operator operations on better-auth (CLI, tests; never over HTTP): users by e-mail, organizations with unique
 * slugs, memberships, session JWTs for a user, and the membership look-up the tenancy code reconciles its
 * role table from.
 */
import { AppError, isRole, type Role } from '@notary/shared';
import { APIError } from 'better-auth';
import type { IdentityAdmin, IdentityOrganization, IdentityUser } from '../../../ports/identity';
import type { MembershipEventHub } from './membership-events';
import type { BetterAuthInstance } from './options';
import { SLUG_PATTERN, serialPrefixRefusal } from './organization-guard';
import { claimsFor, type FindMember } from './session-jwt';
import { bestRole } from './store';

/** Lower-case URL slug from a display name: ASCII letters and digits separated by single hyphens. */
export function slugify(name: string): string {
  return name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '');
}

interface UserRow {
  id: string;
  email: string;
  name: string;
}

interface OrganizationRow {
  id: string;
  name: string;
  slug: string;
}

/** `IdentityAdmin` plus the provider-side membership lookup (structurally the tenancy's `MembershipLookup`). */
export interface BetterAuthAdmin extends IdentityAdmin {
  /**
   * The user's membership of `organizationId` at better-auth, or null when not a member, when the organization
   * does not exist, or when the stored role is none of the service's roles (least privilege: no access).
   */
  getMembership(
    organizationId: string,
    userId: string,
  ): Promise<{ role: Role; organizationName: string; organizationSlug: string } | null>;
}

/** The admin on the better-auth instance `getAuth` returns; membership changes it makes reach `events`. */
export function createAdmin(
  getAuth: () => BetterAuthInstance,
  findMember: FindMember,
  events: MembershipEventHub,
): BetterAuthAdmin {
  const toUser = (u: UserRow): IdentityUser => ({ id: u.id, email: u.email, name: u.name });
  const toOrg = (o: OrganizationRow): IdentityOrganization => ({ id: o.id, name: o.name, slug: o.slug });

  const findUserById = async (id: string): Promise<UserRow | null> =>
    (await getAuth().$context).internalAdapter.findUserById(id);

  const findOrgBy = async (field: 'id' | 'slug', value: string): Promise<OrganizationRow | null> =>
    (await getAuth().$context).adapter.findOne<OrganizationRow>({
      model: 'organization',
      where: [{ field, value }],
    });

  const admin: BetterAuthAdmin = {
    async getMembership(organizationId, userId) {
      const member = await findMember(organizationId, userId);
      const role = bestRole(member?.role);
      if (!member || !role) return null;
      const org = await findOrgBy('id', organizationId);
      return org ? { role, organizationName: org.name, organizationSlug: org.slug } : null;
    },

    async ensureUser({ email, name }) {
      const normalized = email.trim().toLowerCase();
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(normalized))
        throw new AppError('BAD_REQUEST', `Invalid e-mail: ${email}`);
      const existing = await admin.findUserByEmail(normalized);
      if (existing) return existing;
      const ctx = await getAuth().$context;
      try {
        // Created by the operator: the address counts as verified, so the first code sign-in just works.
        const user = await ctx.internalAdapter.createUser(
          { email: normalized, name: name ?? '', emailVerified: true },
          { method: 'admin' },
        );
        return toUser(user);
      } catch (e) {
        // Lost a race with another creator of the same address.
        const raced = await admin.findUserByEmail(normalized);
        if (raced) return raced;
        throw e;
      }
    },

    async findUserByEmail(email) {
      const found = await (await getAuth().$context).internalAdapter.findUserByEmail(
        email.trim().toLowerCase(),
      );
      return found ? toUser(found.user) : null;
    },

    async createOrganization({ name, slug, ownerUserId }) {
      const displayName = name.trim();
      if (!displayName) throw new AppError('BAD_REQUEST', 'Organization name is empty');
      const owner = await findUserById(ownerUserId);
      if (!owner) throw new AppError('NOT_FOUND', `No user ${ownerUserId}`);
      const explicit = slug !== undefined;
      const base = explicit ? slug.trim().toLowerCase() : slugify(displayName) || 'org';
      if (!SLUG_PATTERN.test(base)) {
        throw new AppError(
          'BAD_REQUEST',
          `Invalid slug "${slug}": lower-case letters, digits and inner hyphens`,
        );
      }
      if (explicit) {
        // A slug the caller chose is held to the same serial prefix rules as over HTTP; a derived one is not
        // (the tenant then gets the next free prefix, see organizationSerialPrefixCandidates).
        const refusal = await serialPrefixRefusal((await getAuth().$context).adapter, base);
        if (refusal) throw new AppError(refusal.status, refusal.message);
      }
      for (let attempt = 1; attempt <= 50; attempt++) {
        const candidate = attempt === 1 ? base : `${base}-${attempt}`;
        if (await findOrgBy('slug', candidate)) {
          if (explicit) throw new AppError('CONFLICT', `Organization slug "${candidate}" is taken`);
          continue;
        }
        try {
          // No headers: a server-side call, so better-auth creates it for `userId` as `creatorRole` (owner).
          const created = await getAuth().api.createOrganization({
            body: { name: displayName, slug: candidate, userId: owner.id },
          });
          return toOrg(created);
        } catch (e) {
          // Taken between our check and the insert: try the next candidate (or report it when explicit).
          if (!(await findOrgBy('slug', candidate))) throw e;
          if (explicit) throw new AppError('CONFLICT', `Organization slug "${candidate}" is taken`);
        }
      }
      throw new AppError('CONFLICT', `No free slug derived from "${base}"`);
    },

    async findOrganizationBySlug(slug) {
      const org = await findOrgBy('slug', slug.trim().toLowerCase());
      return org ? toOrg(org) : null;
    },

    async setMember({ organizationId, userId, role }) {
      // better-auth stores any string as a role (even undefined on server calls): only the service's roles.
      if (!isRole(role)) throw new AppError('BAD_REQUEST', `Invalid role: ${String(role)}`);
      if (!(await findOrgBy('id', organizationId)))
        throw new AppError('NOT_FOUND', `No organization ${organizationId}`);
      if (!(await findUserById(userId))) throw new AppError('NOT_FOUND', `No user ${userId}`);
      const member = await findMember(organizationId, userId);
      if (member) {
        if (member.role === role) return;
        await (await getAuth().$context).adapter.update({
          model: 'member',
          where: [{ field: 'id', value: member.id }],
          update: { role },
        });
        // A direct update runs no organization hook: report it like the plugin's own endpoints do.
        await events.emit({ type: 'member.upserted', organizationId, userId, role });
        return;
      }
      try {
        // Reported by the plugin's afterAddMember hook.
        await getAuth().api.addMember({ body: { organizationId, userId, role } });
      } catch (e) {
        if (e instanceof APIError)
          throw new AppError('CONFLICT', `Cannot add member: ${e.message}`, { cause: e });
        throw e;
      }
    },

    async issueSessionToken({ userId, organizationId }) {
      const user = await findUserById(userId);
      if (!user) throw new AppError('NOT_FOUND', `No user ${userId}`);
      if (organizationId !== undefined) {
        if (!(await findOrgBy('id', organizationId))) {
          throw new AppError('NOT_FOUND', `No organization ${organizationId}`);
        }
        if (!(await findMember(organizationId, userId))) {
          throw new AppError('FORBIDDEN', `User ${userId} is not a member of organization ${organizationId}`);
        }
      }
      const claims = await claimsFor(findMember, user, organizationId);
      // The jwt plugin's own signer: same key, `iss`, `aud` and lifetime as `GET /api/auth/token`, and the
      // same payload layout (`iat`, custom claims, `sub`) as its getJwtToken.
      const { token } = await getAuth().api.signJWT({
        body: { payload: { iat: Math.floor(Date.now() / 1000), ...claims, sub: user.id } },
      });
      return token;
    },
  };
  return admin;
}
