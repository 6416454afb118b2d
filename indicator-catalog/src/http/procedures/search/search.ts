import { SearchInputSchema, SearchResponseSchema } from '../../../search/schemas';
import { searchIndicators } from '../../../search/search';
import { publicProcedure } from '../../trpc';

/**
 * `GET /api/search?q=<text>[&city=<name>|&geocode=<7 digits>][&year=<yyyy>][&limit=<1..50>]`: ranked indicators with
 * values fetched live and the attribution block; provider failures are per result (`error`). Timing is sent as
 * `Server-Timing` (rank, city, values, total).
 */
export const search = publicProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/api/search',
      tags: ['search'],
      summary: 'Search indicators',
      description:
        'Ranks indicators (exact code or name first, then semantic and lexical legs fused by reciprocal rank) and fetches their values live from the providers, each with its attribution block. `Server-Timing` gives `rank`, `city`, `values` and `total` in ms.',
      errorResponses: { 400: 'Invalid query', 404: 'No municipality matches `city`' },
    },
  })
  .input(SearchInputSchema)
  .output(SearchResponseSchema)
  .query(({ ctx, input }) =>
    searchIndicators(
      {
        embedder: ctx.deps.embedder,
        queryEmbeddings: ctx.deps.queryEmbeddings,
        index: ctx.deps.index,
        catalog: ctx.deps.catalog,
        connectorFor: ctx.deps.connectorFor,
        settings: ctx.deps.config.search,
        log: ctx.deps.log.child({ module: 'search' }),
      },
      input,
      ctx.timing,
    ),
  );
