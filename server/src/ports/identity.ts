import type { Role } from '@notary/shared';

/** Verified claims of a session token (spec, Authentication: item 1). */
export interface SessionClaims {
  userId: string;
  email: string | null;
  /** Active organization at the identity provider, or null for the personal workspace. */
  orgId: string | null;
  /** The provider's role hint; authorization always uses the service's own role table. */
  orgRole: Role | null;
}

/**
 * Verifies `Authorization: Bearer` session tokens. Any identity provider (better-auth in-process, Clerk...)
 * plugs in here.
 */
export interface TokenVerifier {
  /** @throws AppError UNAUTHENTICATED when the token is malformed, expired, or not signed by the provider. */
  verify(token: string): Promise<SessionClaims>;
}

export interface IdentityUser {
  id: string;
  email: string;
  name: string;
}

export interface IdentityOrganization {
  id: string;
  name: string;
  slug: string;
}

/** Operator operations on the identity provider (CLI, tests). Never exposed over HTTP. */
export interface IdentityAdmin {
  /** Creates the user, or returns the existing one with that e-mail (idempotent). */
  ensureUser(input: { email: string; name?: string }): Promise<IdentityUser>;
  findUserByEmail(email: string): Promise<IdentityUser | null>;
  createOrganization(input: {
    name: string;
    slug?: string;
    ownerUserId: string;
  }): Promise<IdentityOrganization>;
  findOrganizationBySlug(slug: string): Promise<IdentityOrganization | null>;
  /** Adds or updates the membership (the role is validated by the caller). */
  setMember(input: { organizationId: string; userId: string; role: Role }): Promise<void>;
  /** Issues a session JWT for `userId`, with `organizationId` active when given (membership checked). */
  issueSessionToken(input: { userId: string; organizationId?: string }): Promise<string>;
}
