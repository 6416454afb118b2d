import { AcervoTokenCreatedSchema } from '@notary/shared';
import { createAcervoToken } from '../../../domain/acervo/token';
import { authedProcedure } from '../../trpc';

/**
 * `POST /api/settings/acervo-token` (spec, Settings and other routes named but not detailed): generates or
 * rotates the active tenant's acervo token;
 * 201 `{token, createdAt}`, the token shown this once; the previous token stops working at once. Admin+.
 */
export const createAcervoTokenProcedure = authedProcedure
  .meta({
    openapi: {
      errorResponses: { 401: 'Missing or invalid session token', 403: 'Below admin in the organization' },
      method: 'POST',
      path: '/api/settings/acervo-token',
      summary: 'Create or replace the acervo token (shown once)',
      tags: ['settings'],
      protect: true,
      successDescription: 'The new acervo token (only in this answer)',
    },
    rest: { status: 201 },
  })
  .output(AcervoTokenCreatedSchema)
  .mutation(({ ctx }) => createAcervoToken(ctx.em(), ctx.actor));
