import type { Role } from '@notary/shared';

/** A member of an organization as the identity provider keeps it (spec, Team member). */
export interface DirectoryMember {
  userId: string;
  /** For wallet (SIWE) accounts a placeholder under `.invalid` (`isPlaceholderEmail`): never show or mail it. */
  email: string;
  name: string;
  imageUrl: string;
  role: Role;
  joinedAt: Date;
}

/** An invitation (spec, Invitation); `status` is stored as is: a `pending` one may be past `expiresAt`. */
export interface DirectoryInvitation {
  id: string;
  organizationId: string;
  email: string;
  role: Role;
  inviterUserId: string;
  createdAt: Date;
  expiresAt: Date;
  status: 'pending' | 'accepted' | 'canceled' | 'rejected';
}

export interface DirectoryOrganization {
  id: string;
  name: string;
  slug: string;
  description: string;
  createdAt: Date;
}

/** A membership change the provider reports (hooks in-process, webhooks from a hosted provider). */
export type MembershipEvent =
  | { type: 'member.upserted'; organizationId: string; userId: string; role: Role }
  | { type: 'member.removed'; organizationId: string; userId: string }
  | { type: 'organization.deleted'; organizationId: string };

/**
 * Organizations, memberships and invitations at the identity provider (spec, Team). Memberships live at the
 * provider; the service's role table (`tenant_member`) mirrors them and is what authorization reads.
 * Every method throws AppError BAD_GATEWAY when the provider fails, NOT_FOUND for an unknown id (organization,
 * user, invitation, or a membership to change or remove), BAD_REQUEST for a role that is not one of `ROLES`.
 * Role rules (hierarchy, last owner) are the caller's job: these methods do what they are told.
 * Each successful change emits its `MembershipEvent` before the method resolves (listeners are awaited; a
 * listener's failure is logged, never thrown).
 */
export interface OrganizationDirectory {
  getOrganization(organizationId: string): Promise<DirectoryOrganization | null>;
  listOrganizations(): Promise<DirectoryOrganization[]>;
  /** Updates name and/or description (description kept in the provider's organization metadata). */
  updateOrganization(organizationId: string, patch: { name?: string; description?: string }): Promise<void>;
  /** Removes the organization with its memberships and invitations. Idempotent (gone already: no error). */
  deleteOrganization(organizationId: string): Promise<void>;

  /** Oldest first. A member whose provider role is none of `ROLES` grants nothing and is left out. */
  listMembers(organizationId: string): Promise<DirectoryMember[]>;
  setMemberRole(organizationId: string, userId: string, role: Role): Promise<void>;
  /** Adds the user directly (wallet invitations). @throws AppError CONFLICT when already a member. */
  addMember(organizationId: string, userId: string, role: Role): Promise<void>;
  removeMember(organizationId: string, userId: string): Promise<void>;

  /**
   * The account that signed in with this wallet (SIWE), by address, case-insensitive; `email` is null for a
   * placeholder address. @throws AppError BAD_REQUEST when `address` is not `0x` plus 40 hex digits.
   */
  findUserByWallet(address: string): Promise<{ id: string; email: string | null } | null>;

  /**
   * Creates (or renews: same id, new role and inviter, expiry reset) a pending invitation valid 7 days; does not
   * send mail (the service does, with its templates). The e-mail is stored lower-cased.
   * @throws AppError BAD_REQUEST malformed or placeholder e-mail; CONFLICT the address is already a member's.
   */
  createInvitation(input: {
    organizationId: string;
    email: string;
    role: Role;
    inviterUserId: string;
  }): Promise<DirectoryInvitation>;
  /** Pending and unexpired ones, oldest first. */
  listInvitations(organizationId: string): Promise<DirectoryInvitation[]>;
  /** Any status (null when unknown). */
  getInvitation(invitationId: string): Promise<DirectoryInvitation | null>;
  /** Idempotent for a canceled one. @throws AppError GONE when accepted or rejected. */
  cancelInvitation(invitationId: string): Promise<void>;
  /**
   * Accepts a pending invitation for `userId` (whose e-mail must match it, case-insensitive): the user becomes
   * a member with the invitation's role and the invitation is marked accepted (once: of concurrent accepts one
   * wins). A user who already is a member keeps a higher role (never demoted); the role returned is the one held.
   * @throws AppError GONE when expired or no longer pending, FORBIDDEN when the e-mail differs.
   */
  acceptInvitation(invitationId: string, userId: string): Promise<{ organizationId: string; role: Role }>;

  /** Subscribes to membership changes made through the provider (for the service's role table). */
  onMembershipEvent(listener: (event: MembershipEvent) => Promise<void> | void): void;
}
