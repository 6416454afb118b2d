import type { EntityManager } from '@mikro-orm/core';
import { AppError } from '@notary/shared';
import type { TokenVerifier } from '../../ports/identity';
import type { Actor } from './actor';
import { type MembershipLookup, resolveTenant } from './resolve';

/**
 * Verifies a session bearer token and resolves the caller's tenant and role (spec, Authentication 1-2).
 * Shared by tRPC procedures and the hand-written Express routes, so both enforce the same rules.
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
  return { userId: claims.userId, email: claims.email, tenant, role, ip };
}
