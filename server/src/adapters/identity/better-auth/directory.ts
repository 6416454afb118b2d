/**
 * `OrganizationDirectory` on better-auth 1.7.7 (organization and siwe plugins), assembled from its three
 * concerns: organizations (`directory-organizations.ts`), members and wallets (`directory-members.ts`),
 * invitations (`directory-invitations.ts`).
 *
 * The directory works on better-auth's database adapter (`(await auth.$context).adapter`), never through
 * `auth.api.*`: those endpoints want a request session, and the service calls the directory as an operator
 * after doing its own authorization (spec, Team: the role hierarchy). Because of that, each directory method
 * emits its own events after it succeeded.
 *
 * On PGlite, do not call the directory from inside `em.transactional`: it uses its own connection, which
 * waits for the transaction's (deadlock).
 */
import type { OrganizationDirectory } from '../../../ports/directory';
import { invitationMethods } from './directory-invitations';
import { memberMethods } from './directory-members';
import { organizationMethods } from './directory-organizations';
import type { MembershipEventHub } from './membership-events';
import type { DirectoryAdapter } from './store';

/**
 * The directory on better-auth's adapter. `adapter` resolves better-auth's database adapter
 * (`(await auth.$context).adapter`); `events` receives the membership events of every successful change.
 *
 * Errors: AppError NOT_FOUND (unknown organization, user, member or invitation), BAD_REQUEST (a role that
 * is not one of the service's, a malformed e-mail or wallet address, an empty name), CONFLICT (adding a
 * member twice, inviting a member), GONE and FORBIDDEN (`acceptInvitation`), BAD_GATEWAY (the provider's
 * database failed).
 */
export function createBetterAuthDirectory(input: {
  adapter: () => Promise<DirectoryAdapter>;
  events: MembershipEventHub;
}): OrganizationDirectory {
  const { events } = input;
  const context = { adapter: input.adapter, events, now: () => new Date() };
  return {
    ...organizationMethods(context),
    ...memberMethods(context),
    ...invitationMethods(context),
    onMembershipEvent(listener) {
      events.subscribe(listener);
    },
  };
}
