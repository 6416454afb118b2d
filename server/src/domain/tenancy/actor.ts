import type { Role } from '@notary/shared';
import type { TenantEntity } from '../../db/entities';

/**
 * The authenticated caller acting in a tenant: the active organization when one is selected, otherwise the
 * user's personal workspace (spec, Authentication 2). `role` comes from the service's own role table.
 */
export interface Actor {
  userId: string;
  email: string | null;
  tenant: TenantEntity;
  role: Role;
  /** Client IP as seen by the HTTP layer (for the record; never in public projections). */
  ip: string | null;
}
