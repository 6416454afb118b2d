import { ResourceId } from '@notary/shared';
import { z } from 'zod';
import { getAnchorProof } from '../../../domain/anchoring/proof';
import { authedProcedure } from '../../trpc';
import { DOCUMENT_ERROR_RESPONSES } from './error-responses';

const Hex64 = z.string().regex(/^[0-9a-f]{64}$/);

/** The owner's view of a document's anchoring batch (see `AnchorProofView`). */
export const AnchorProofSchema = z
  .object({
    batchId: z.string().nullable(),
    root: Hex64.nullable(),
    batchSize: z.number().int().nullable(),
    proof: z
      .object({
        index: z.number().int(),
        siblings: z.array(z.object({ position: z.enum(['left', 'right']), hash: Hex64 })),
      })
      .nullable(),
  })
  .meta({ id: 'AnchorProof' });

/** `GET /api/documents/:id/anchor-proof`: the document's Merkle proof (all null before it is batched). */
export const anchorProof = authedProcedure
  .meta({
    openapi: {
      errorResponses: DOCUMENT_ERROR_RESPONSES,
      method: 'GET',
      path: '/api/documents/{id}/anchor-proof',
      summary: "The document's Merkle proof and on-chain anchors",
      tags: ['documents'],
      protect: true,
    },
  })
  .input(z.object({ id: ResourceId }))
  .output(AnchorProofSchema)
  .query(({ ctx, input }) => getAnchorProof(ctx.em(), ctx.actor, input.id));
