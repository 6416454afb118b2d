import { AppError, type Role } from '@notary/shared';
import type { TenantEntity } from '../../db/entities';

/**
 * The authenticated caller acting in a tenant: the active organization when one is selected, otherwise the
 * user's personal workspace (spec, Authentication: item 2). `role` comes from the service's own role table.
 */
export interface Actor {
  userId: string;
  email: string | null;
  tenant: TenantEntity;
  role: Role;
  /** Client IP as seen by the HTTP layer (for the record; never in public projections). */
  ip: string | null;
}

/** An actor known to be acting in an organization. */
export type OrganizationActor = Actor & {
  tenant: TenantEntity & { kind: 'organization' };
  organizationId: string;
};

/**
 * Narrows to an actor in an organization (team and organization routes).
 * @throws AppError BAD_REQUEST with the spec's message `No active organization`.
 */
export function requireOrganization(actor: Actor): OrganizationActor {
  if (actor.tenant.kind !== 'organization') throw new AppError('BAD_REQUEST', 'No active organization');
  return {
    ...actor,
    tenant: actor.tenant as TenantEntity & { kind: 'organization' },
    organizationId: actor.tenant.externalId,
  };
}
