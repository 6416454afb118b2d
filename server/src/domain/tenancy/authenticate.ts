import type { EntityManager } from '@mikro-orm/core';
import { AppError } from '@notary/shared';
import type { TokenVerifier } from '../../ports/identity';
import type { Actor } from './actor';
import { type MembershipLookup, resolveTenant } from './resolve';
import { scopeToTenant } from './scope';

/**
 * Verifies a session bearer token and resolves the caller's tenant and role (spec, Authentication: items 1-2), then
 * scopes `em` (the request's own fork) to that tenant: every later query through it, its forks and its
 * transactions sees only the tenant's rows (`scopeToTenant`). Shared by tRPC procedures and the hand-written
 * Express routes, so both enforce the same rules and no query of an authenticated request can forget its tenant.
 * @throws AppError UNAUTHENTICATED (no or bad token), FORBIDDEN (not a member of the token's organization).
 */
export async function authenticate(
  em: EntityManager,
  ports: { tokens: TokenVerifier; memberships: MembershipLookup },
  bearer: string | null,
  ip: string | null,
): Promise<Actor> {
  if (!bearer) throw new AppError('UNAUTHENTICATED', 'Missing Authorization: Bearer session token');
  const claims = await ports.tokens.verify(bearer);
  const { tenant, role } = await resolveTenant(em, claims, ports.memberships);
  scopeToTenant(em, tenant.id);
  return { userId: claims.userId, email: claims.email, tenant, role, ip };
}
