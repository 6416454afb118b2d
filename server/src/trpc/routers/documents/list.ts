import { DocumentListQuerySchema, DocumentListSchema } from '@notary/shared';
import { listDocumentsPage } from '../../../domain/documents/list';
import { authedProcedure } from '../../trpc';

/**
 * `GET /api/documents?limit=&cursor=&q=`: one page of the active tenant's non-deleted documents, newest
 * first, with the cursor of the next (docs/api.md, Documents list). Without parameters: the first 100, in the
 * spec's `{documents}` shape (plus `nextCursor`). The input may be left out by tRPC callers.
 */
export const list = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'limit outside 1..100, q shorter than 3 characters, or a malformed cursor',
        401: 'Missing or invalid session token',
      },
      method: 'GET',
      path: '/api/documents',
      summary: "The workspace's documents, newest first",
      description:
        "Pages of at most `limit` (default and most 100), keyset-paged: pass the answer's `nextCursor` as `cursor` for the next page (null on the last). `q` searches serial, SHA-256 and CID prefixes and any part of the file name.",
      tags: ['documents'],
      protect: true,
    },
  })
  .input(DocumentListQuerySchema.optional())
  .output(DocumentListSchema)
  .query(({ ctx, input }) => listDocumentsPage(ctx.em(), ctx.deps.storage, ctx.actor, input ?? {}));
