import { ServentiaSchema } from '@notary/shared';
import { readServentia } from '../../../domain/retention/serventia';
import { authedProcedure } from '../../trpc';

/**
 * `GET /api/org/serventia`: the active organization's serventia, `{cns, retention: {years} | "permanent",
 * declaredAt, declaredBy?}`. Any member; 404 when none is declared.
 */
export const readServentiaProcedure = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'No active organization (a personal workspace is never a serventia)',
        401: 'Missing or invalid session token',
        404: 'The organization has not declared a serventia',
      },
      method: 'GET',
      path: '/api/org/serventia',
      summary: "The organization's serventia (CNS and retention)",
      tags: ['org'],
      protect: true,
    },
  })
  .output(ServentiaSchema)
  .query(({ ctx }) => readServentia(ctx.em(), ctx.actor));
