import type { Role } from '@notary/shared';

/** A member of an organization as the identity provider keeps it (spec, Team member). */
export interface DirectoryMember {
  userId: string;
  email: string;
  name: string;
  imageUrl: string;
  role: Role;
  joinedAt: Date;
}

/** A pending invitation (spec, Invitation). */
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
 * Organizations, memberships and invitations at the identity provider (issue 3). Memberships live at the
 * provider; the service's role table (`tenant_member`) mirrors them and is what authorization reads.
 * Every method throws AppError BAD_GATEWAY when the provider fails, NOT_FOUND for an unknown id.
 * Role rules (hierarchy, last owner) are the caller's job: these methods do what they are told.
 */
export interface OrganizationDirectory {
  getOrganization(organizationId: string): Promise<DirectoryOrganization | null>;
  listOrganizations(): Promise<DirectoryOrganization[]>;
  /** Updates name and/or description (description kept in the provider's organization metadata). */
  updateOrganization(organizationId: string, patch: { name?: string; description?: string }): Promise<void>;
  /** Removes the organization with its memberships and invitations. Idempotent (gone already: no error). */
  deleteOrganization(organizationId: string): Promise<void>;

  listMembers(organizationId: string): Promise<DirectoryMember[]>;
  setMemberRole(organizationId: string, userId: string, role: Role): Promise<void>;
  /** Adds the user directly (wallet invitations). */
  addMember(organizationId: string, userId: string, role: Role): Promise<void>;
  removeMember(organizationId: string, userId: string): Promise<void>;

  /** The account that signed in with this wallet (SIWE), by address, case-insensitive. */
  findUserByWallet(address: string): Promise<{ id: string; email: string | null } | null>;

  /** Creates (or renews) a pending invitation; does not send mail (the service does, with its templates). */
  createInvitation(input: {
    organizationId: string;
    email: string;
    role: Role;
    inviterUserId: string;
  }): Promise<DirectoryInvitation>;
  listInvitations(organizationId: string): Promise<DirectoryInvitation[]>;
  getInvitation(invitationId: string): Promise<DirectoryInvitation | null>;
  cancelInvitation(invitationId: string): Promise<void>;
  /**
   * Accepts a pending invitation for `userId` (whose e-mail must match it): the user becomes a member with the
   * invitation's role. @throws AppError GONE when expired or no longer pending, FORBIDDEN when the e-mail differs.
   */
  acceptInvitation(invitationId: string, userId: string): Promise<{ organizationId: string; role: Role }>;

  /** Subscribes to membership changes made through the provider (for the service's role table). */
  onMembershipEvent(listener: (event: MembershipEvent) => Promise<void> | void): void;
}
