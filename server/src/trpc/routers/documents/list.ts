import { DocumentListSchema } from '@notary/shared';
import { listDocuments } from '../../../domain/documents/service';
import { authedProcedure } from '../../trpc';

/** `GET /api/documents`: the active tenant's non-deleted documents, newest first. */
export const list = authedProcedure
  .meta({
    openapi: {
      errorResponses: { 401: 'Missing or invalid session token' },
      method: 'GET',
      path: '/api/documents',
      summary: "The workspace's documents, newest first",
      tags: ['documents'],
      protect: true,
    },
  })
  .output(DocumentListSchema)
  .query(async ({ ctx }) => ({ documents: await listDocuments(ctx.em(), ctx.deps.storage, ctx.actor) }));
