import { DownloadSchema, ResourceId } from '@notary/shared';
import { z } from 'zod';
import { presignDownload } from '../../../domain/documents/service';
import { authedProcedure } from '../../trpc';
import { LIVE_DOCUMENT_ERROR_RESPONSES } from './error-responses';

/**
 * `GET /api/documents/:id/download`: URL valid 300 s, attachment, neutral type (an IPFS import: the public
 * gateway's URL with `download=true`); 410 LGPD-deleted.
 */
export const download = authedProcedure
  .meta({
    openapi: {
      errorResponses: LIVE_DOCUMENT_ERROR_RESPONSES,
      method: 'GET',
      path: '/api/documents/{id}/download',
      summary: 'A presigned URL to download the file',
      tags: ['documents'],
      protect: true,
    },
  })
  .input(z.object({ id: ResourceId }))
  .output(DownloadSchema)
  .query(({ ctx, input }) => presignDownload(ctx.em(), ctx.deps, ctx.actor, input.id));
