import { AcervoTokenStatusSchema } from '@notary/shared';
import { acervoTokenStatus } from '../../../domain/acervo/token';
import { authedProcedure } from '../../trpc';

/** `GET /api/settings/acervo-token`: `{enabled, createdAt}`, never the token. Admin+. */
export const acervoTokenStatusProcedure = authedProcedure
  .meta({
    openapi: {
      errorResponses: { 401: 'Missing or invalid session token', 403: 'Below admin in the organization' },
      method: 'GET',
      path: '/api/settings/acervo-token',
      summary: "Whether the workspace's acervo token exists",
      tags: ['settings'],
      protect: true,
    },
  })
  .output(AcervoTokenStatusSchema)
  .query(({ ctx }) => acervoTokenStatus(ctx.em(), ctx.actor));
