/**
 * Membership events out of better-auth: the hub every listener subscribes to (the directory's
 * `onMembershipEvent`) and the organization plugin's `organizationHooks`, which report the membership changes
 * better-auth makes itself (its HTTP endpoints, `auth.api.*`). The directory and the admin emit their own
 * changes through the same hub.
 */
import type { OrganizationOptions } from 'better-auth/plugins/organization';
import type { MembershipEvent } from '../../../ports/directory';
import { bestRole } from './store';

export type MembershipListener = (event: MembershipEvent) => Promise<void> | void;

/**
 * Fan-out of membership events to the subscribed listeners, in subscription order, each awaited. A listener
 * that throws (or rejects) is logged through `logError` and skipped: it never fails the provider call that
 * produced the event.
 */
export class MembershipEventHub {
  private readonly listeners: MembershipListener[] = [];

  constructor(private readonly logError: (message: string, error: unknown) => void) {}

  subscribe(listener: MembershipListener): void {
    this.listeners.push(listener);
  }

  async emit(event: MembershipEvent): Promise<void> {
    for (const listener of this.listeners) {
      try {
        await listener(event);
      } catch (e) {
        this.logError(`membership event listener failed on ${event.type} (${JSON.stringify(event)})`, e);
      }
    }
  }
}

/**
 * The organization plugin's `organizationHooks`: membership changes made by better-auth itself (its HTTP
 * endpoints, `auth.api.*` calls such as `IdentityAdmin.createOrganization`) become membership events.
 * Organization creation runs `afterAddMember` for the creator, so it reports `member.upserted` (owner) once.
 * A stored role that is none of the service's is reported as `member.removed` (it grants nothing).
 * `leave` runs no organization hook: `createOrganizationGuard`'s after hook reports it.
 */
export function createOrganizationHooks(
  events: MembershipEventHub,
): OrganizationOptions['organizationHooks'] {
  const upserted = async (member: { organizationId: string; userId: string; role: string }) => {
    const role = bestRole(member.role);
    await events.emit(
      role
        ? { type: 'member.upserted', organizationId: member.organizationId, userId: member.userId, role }
        : { type: 'member.removed', organizationId: member.organizationId, userId: member.userId },
    );
  };
  return {
    afterAddMember: ({ member }) => upserted(member),
    afterUpdateMemberRole: ({ member }) => upserted(member),
    afterAcceptInvitation: ({ member }) => upserted(member),
    afterRemoveMember: ({ member }) =>
      events.emit({ type: 'member.removed', organizationId: member.organizationId, userId: member.userId }),
    afterDeleteOrganization: ({ organization }) =>
      events.emit({ type: 'organization.deleted', organizationId: organization.id }),
  };
}
