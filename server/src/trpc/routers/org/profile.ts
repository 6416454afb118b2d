import { OrgProfilePatchSchema, updateOrganizationProfile } from '../../../domain/org/profile';
import { authedProcedure } from '../../trpc';
import { OrgOkSchema } from './schemas';

/**
 * `PATCH /api/org/profile` (spec, Organization): JSON `{name?, description?}` (name 1 to 120 characters,
 * description up to 500, both trimmed) → 200 `{ok:true}`. Admin or owner of the active organization.
 */
export const updateProfile = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'Validation failed, nothing to update, or no active organization',
        401: 'Missing or invalid session token',
        403: 'Below admin in the organization',
        502: 'Identity provider error',
      },
      method: 'PATCH',
      path: '/api/org/profile',
      summary: "Change the organization's name and description",
      tags: ['org'],
      protect: true,
    },
  })
  .input(OrgProfilePatchSchema)
  .output(OrgOkSchema)
  .mutation(({ ctx, input }) => updateOrganizationProfile(ctx.em(), ctx.deps.directory, ctx.actor, input));
