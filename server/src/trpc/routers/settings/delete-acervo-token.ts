import { OkSchema } from '@notary/shared';
import { deleteAcervoToken } from '../../../domain/acervo/token';
import { authedProcedure } from '../../trpc';

/**
 * `DELETE /api/settings/acervo-token` (spec, Settings and other routes named but not detailed): disables the
 * feed; 200 `{ok:true}`, idempotent. Admin+.
 */
export const deleteAcervoTokenProcedure = authedProcedure
  .meta({
    openapi: {
      errorResponses: { 401: 'Missing or invalid session token', 403: 'Below admin in the organization' },
      method: 'DELETE',
      path: '/api/settings/acervo-token',
      summary: 'Revoke the acervo token',
      tags: ['settings'],
      protect: true,
    },
  })
  .output(OkSchema)
  .mutation(({ ctx }) => deleteAcervoToken(ctx.em(), ctx.actor));
