import { MeSchema } from '@notary/shared';
import { authedProcedure } from '../../trpc';

/** Who the caller is and in which tenant they act (desktop: header, tenant switcher). tRPC only. */
export const me = authedProcedure.output(MeSchema).query(({ ctx }) => ({
  userId: ctx.actor.userId,
  email: ctx.actor.email,
  tenantId: ctx.actor.tenant.id,
  tenantKind: ctx.actor.tenant.kind,
  orgId: ctx.actor.tenant.kind === 'organization' ? ctx.actor.tenant.externalId : null,
  role: ctx.actor.role,
}));
