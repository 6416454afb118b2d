import { HashComparisonSchema, ResourceId, Sha256Hex } from '@notary/shared';
import { z } from 'zod';
import { compareHash } from '../../../domain/documents/service';
import { authedProcedure } from '../../trpc';
import { DOCUMENT_ERROR_RESPONSES } from './error-responses';

/** `GET /api/documents/:id/verify?hash=`: compares a hash with the stored one. */
export const verify = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        ...DOCUMENT_ERROR_RESPONSES,
        400: 'Malformed hash',
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
