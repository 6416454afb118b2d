/**
 * The session JWT: better-auth's `jwt` plugin signing ES256 tokens (RFC 7515/7519, keys in `auth.jwks`,
 * published at `GET /api/auth/jwks` as an RFC 7517 JWK Set) with `iss` and `aud` the public URL, a lifetime of
 * `sessionTtlSeconds`, and the service's claims:
 * `{ sub: userId, email: string | null, orgId: string | null, role: "owner"|"admin"|"editor"|"reader"|null,
 *    iat, exp, iss, aud }`. `orgId` names the active organization only while the user is still a member;
 * `role` is a hint (authorization uses the service's own role table).
 */
import type { Role } from '@notary/shared';
import { jwt } from 'better-auth/plugins';
import { isPlaceholderEmail } from '../../../ports/mail';
import { bestRole } from './store';

/**
 * The custom JWT claims for `user` with `activeOrganizationId` active: the organization and the member's role
 * only while the user is a member (a stale active organization yields none); placeholder e-mails become null.
 */
export async function claimsFor(
  findMember: FindMember,
  user: { id: string; email: string },
  activeOrganizationId: unknown,
): Promise<TokenClaims> {
  const email = isPlaceholderEmail(user.email) ? null : user.email;
  if (typeof activeOrganizationId !== 'string' || activeOrganizationId === '') {
    return { email, orgId: null, role: null };
  }
  const member = await findMember(activeOrganizationId, user.id);
  // Removed since the organization became active: the token must not name it any more.
  if (!member) return { email, orgId: null, role: null };
  return { email, orgId: activeOrganizationId, role: bestRole(member.role) };
}

/** The membership of `userId` in `organizationId` (its role as better-auth stores it), or null. */
export type FindMember = (
  organizationId: string,
  userId: string,
) => Promise<{ id: string; role: string } | null>;

/** Custom claims of the session JWT besides `sub`, `iat`, `exp`, `iss`, `aud`. */
export interface TokenClaims {
  [claim: string]: string | null;
  email: string | null;
  orgId: string | null;
  role: Role | null;
}

/** The `jwt` plugin: ES256, issuer and audience `publicUrl`, lifetime `sessionTtlSeconds`, claims by `claimsFor`. */
export function sessionJwtPlugin(publicUrl: string, sessionTtlSeconds: number, findMember: FindMember) {
  return jwt({
    jwks: { keyPairConfig: { alg: 'ES256' } },
    jwt: {
      issuer: publicUrl,
      audience: publicUrl,
      // A string is a duration; a number would be taken as an absolute `exp` timestamp.
      expirationTime: `${sessionTtlSeconds}s`,
      definePayload: ({ user, session }) => claimsFor(findMember, user, session.activeOrganizationId),
    },
  });
}
