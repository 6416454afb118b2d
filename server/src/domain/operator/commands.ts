import type { EntityManager } from '@mikro-orm/core';
import { isRole, type Role } from '@notary/shared';
import type { IdentityAdmin } from '../../adapters/identity/port';
import { AppError } from '../errors';
import { ensureOrganizationTenant, ensurePersonalTenant, setTenantRole } from '../tenancy/resolve';

/**
 * Operator commands (`npm run notary -- <command>`), acting with direct access to the identity provider
 * and the database; never exposed over HTTP. Each returns what the CLI prints.
 */
export interface OperatorContext {
  em: EntityManager;
  identity: IdentityAdmin;
}

export type OperatorCommand =
  | { command: 'user:create'; email: string }
  | { command: 'org:create'; name: string; owner: string }
  | { command: 'member:add'; org: string; email: string; role: string }
  | { command: 'token'; email: string; org?: string | undefined };

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function normalizeEmail(email: string): string {
  const e = email.trim().toLowerCase();
  if (!EMAIL.test(e)) throw new AppError('BAD_REQUEST', `Not an e-mail address: ${email}`);
  return e;
}

async function userByEmail(ctx: OperatorContext, email: string) {
  const user = await ctx.identity.findUserByEmail(normalizeEmail(email));
  if (!user) throw new AppError('NOT_FOUND', `No user with e-mail ${email} (create it with user:create)`);
  return user;
}

async function orgBySlug(ctx: OperatorContext, slug: string) {
  const org = await ctx.identity.findOrganizationBySlug(slug.trim().toLowerCase());
  if (!org) throw new AppError('NOT_FOUND', `No organization with slug ${slug}`);
  return org;
}

/**
 * Runs one operator command.
 * - `user:create`: creates the user (idempotent) and their personal workspace; prints the user id.
 * - `org:create`: creates the organization with the owner (an existing user); prints `<id> <slug>`.
 * - `member:add`: adds or updates a membership with the role owner|admin|editor|reader.
 * - `token`: prints a session JWT for the user, with the organization active when `org` is given.
 * @throws AppError BAD_REQUEST (invalid input), NOT_FOUND (unknown user or organization).
 */
export async function runOperatorCommand(ctx: OperatorContext, cmd: OperatorCommand): Promise<string> {
  switch (cmd.command) {
    case 'user:create': {
      const user = await ctx.identity.ensureUser({ email: normalizeEmail(cmd.email) });
      await ensurePersonalTenant(ctx.em, user.id, user.email);
      return user.id;
    }
    case 'org:create': {
      const name = cmd.name.trim();
      if (name.length < 1 || name.length > 120)
        throw new AppError('BAD_REQUEST', 'Organization name must be 1 to 120 characters');
      const owner = await userByEmail(ctx, cmd.owner);
      const org = await ctx.identity.createOrganization({ name, ownerUserId: owner.id });
      const tenant = await ensureOrganizationTenant(ctx.em, org);
      await setTenantRole(ctx.em, tenant, owner.id, 'owner');
      return `${org.id} ${org.slug}`;
    }
    case 'member:add': {
      if (!isRole(cmd.role))
        throw new AppError('BAD_REQUEST', `Role must be owner, admin, editor or reader (got ${cmd.role})`);
      const role: Role = cmd.role;
      const org = await orgBySlug(ctx, cmd.org);
      const user = await userByEmail(ctx, cmd.email);
      await ctx.identity.setMember({ organizationId: org.id, userId: user.id, role });
      const tenant = await ensureOrganizationTenant(ctx.em, org);
      await setTenantRole(ctx.em, tenant, user.id, role);
      return `${user.email} is ${role} of ${org.slug}`;
    }
    case 'token': {
      const user = await userByEmail(ctx, cmd.email);
      const org = cmd.org ? await orgBySlug(ctx, cmd.org) : undefined;
      return ctx.identity.issueSessionToken({ userId: user.id, ...(org ? { organizationId: org.id } : {}) });
    }
  }
}
