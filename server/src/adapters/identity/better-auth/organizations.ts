/**
 * better-auth's `organization` plugin as the service configures it: the service's four roles (owner, admin,
 * editor, reader; editors and readers manage nothing in better-auth), the creator as owner, up to 10 000
 * members, invitations valid 7 days and never mailed by better-auth (the service mails them), and the
 * organization hooks that report membership changes (`membership-events.ts`). Which of its HTTP endpoints are
 * served is decided by `organization-guard.ts`.
 */
import { organization } from 'better-auth/plugins';
import { createAccessControl } from 'better-auth/plugins/access';
import { adminAc, defaultStatements, memberAc, ownerAc } from 'better-auth/plugins/organization/access';
import { createOrganizationHooks, type MembershipEventHub } from './membership-events';

/** Lifetime of an invitation, seconds (7 days); renewing a pending one restarts it. */
export const INVITATION_TTL_SECONDS = 7 * 24 * 3600;
/** better-auth's default is 100 members per organization; teams here may be larger. */
const MEMBERSHIP_LIMIT = 10_000;

const orgAc = createAccessControl(defaultStatements);

/** The `organization` plugin; its membership changes reach `events`. */
export function organizationPlugin(events: MembershipEventHub) {
  return organization({
    ac: orgAc,
    // The service's roles (shared/src/roles.ts); editors and readers manage nothing in better-auth.
    roles: {
      owner: orgAc.newRole(ownerAc.statements),
      admin: orgAc.newRole(adminAc.statements),
      editor: orgAc.newRole(memberAc.statements),
      reader: orgAc.newRole(memberAc.statements),
    },
    creatorRole: 'owner',
    membershipLimit: MEMBERSHIP_LIMIT,
    invitationExpiresIn: INVITATION_TTL_SECONDS,
    // The service mails invitations itself, with its own templates (and never to placeholder addresses).
    sendInvitationEmail: async () => {},
    organizationHooks: createOrganizationHooks(events),
  });
}
