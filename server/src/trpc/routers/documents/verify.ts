import { HashComparisonSchema, ResourceId, Sha256Hex } from '@notary/shared';
import { z } from 'zod';
import { compareHash } from '../../../domain/documents/service';
import { authedProcedure } from '../../trpc';

/** `GET /api/documents/:id/verify?hash=`: compares a hash with the stored one. */
export const verify = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'Malformed hash',
        401: 'Missing or invalid session token',
        403: 'Document of another tenant',
        404: 'No such document',
      },
      method: 'GET',
      path: '/api/documents/{id}/verify',
      summary: "Compare a SHA-256 hash with the document's",
      tags: ['documents'],
      protect: true,
    },
  })
  .input(z.object({ id: ResourceId, hash: Sha256Hex }))
  .output(HashComparisonSchema)
  .query(({ ctx, input }) => compareHash(ctx.em(), ctx.actor, input.id, input.hash));
