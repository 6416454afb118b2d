import type { EntityManager } from '@mikro-orm/core';
import { AppError } from '@notary/shared';
import { z } from 'zod';
import { Tenant } from '../../db/entities';
import type { OrganizationDirectory } from '../../ports/directory';
import type { Actor } from '../tenancy/actor';
import { atProvider, requireOrganizationManager } from './guard';

/** Limits of the organization profile (spec, Limits: org name 1 to 120 chars, description up to 500). */
export const ORG_PROFILE_LIMITS = { nameMaxChars: 120, descriptionMaxChars: 500 } as const;

/**
 * Body of `PATCH /api/org/profile`: `name` (1 to 120 characters once trimmed: a name of spaces is no name)
 * and/or `description` (0 to 500 characters once trimmed; an empty string clears it). Lengths count UTF-16
 * code units, as JavaScript and zod do. Unknown keys are ignored.
 */
export const OrgProfilePatchSchema = z.object({
  name: z.string().trim().min(1).max(ORG_PROFILE_LIMITS.nameMaxChars).optional(),
  description: z.string().trim().max(ORG_PROFILE_LIMITS.descriptionMaxChars).optional(),
});
export type OrgProfilePatch = z.infer<typeof OrgProfilePatchSchema>;

/**
 * `PATCH /api/org/profile` (spec, Organization): updates the active organization's name and/or description at
 * the identity provider (the source of truth for organizations), then the service's tenant `name`. The serial
 * prefix stays: serial numbers already issued must keep naming the tenant that issued them.
 * The provider is updated first so that a provider failure changes nothing here; if the tenant update fails
 * afterwards, repeating the request is harmless (both writes are idempotent).
 * @returns `{ok:true}`.
 * @throws AppError BAD_REQUEST (`No active organization`, invalid field, nothing to update), FORBIDDEN (below
 *   admin), BAD_GATEWAY (identity provider error).
 */
export async function updateOrganizationProfile(
  em: EntityManager,
  directory: OrganizationDirectory,
  actor: Actor,
  patch: OrgProfilePatch,
): Promise<{ ok: true }> {
  const org = requireOrganizationManager(actor, 'update the organization profile');
  // The router validates already; parsing again keeps the rule here for every other caller (CLI, jobs).
  const parsed = OrgProfilePatchSchema.safeParse(patch);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new AppError('BAD_REQUEST', `${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'}`);
  }
  const update: { name?: string; description?: string } = {};
  if (parsed.data.name !== undefined) update.name = parsed.data.name;
  if (parsed.data.description !== undefined) update.description = parsed.data.description;
  if (update.name === undefined && update.description === undefined) {
    throw new AppError('BAD_REQUEST', 'Nothing to update: give a name and/or a description');
  }
  await atProvider(
    () => directory.updateOrganization(org.organizationId, update),
    'The identity provider failed to update the organization profile; try again',
  );
  if (update.name !== undefined) {
    await em.nativeUpdate(Tenant, { id: org.tenant.id }, { name: update.name });
  }
  return { ok: true };
}
