import { ResourceId, ViewSchema } from '@notary/shared';
import { z } from 'zod';
import { presignView } from '../../../domain/documents/service';
import { authedProcedure } from '../../trpc';
import { LIVE_DOCUMENT_ERROR_RESPONSES } from './error-responses';

/**
 * `GET /api/documents/:id/view`: URL valid 300 s; inline only for PDF, PNG, JPEG, GIF, WebP, plain text (an
 * IPFS import: the public gateway's URL, with `download=true` unless inline).
 */
export const view = authedProcedure
  .meta({
    openapi: {
      errorResponses: LIVE_DOCUMENT_ERROR_RESPONSES,
      method: 'GET',
      path: '/api/documents/{id}/view',
      summary: 'A presigned URL to view the file inline',
      tags: ['documents'],
      protect: true,
    },
  })
  .input(z.object({ id: ResourceId }))
  .output(ViewSchema)
  .query(({ ctx, input }) => presignView(ctx.em(), ctx.deps, ctx.actor, input.id));
