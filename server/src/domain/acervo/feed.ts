import { type EntityManager, type FilterQuery, raw } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import type { AcervoFeedDto } from '@notary/shared';
import { Document, type DocumentEntity } from '../../db/entities';
import type { AcervoFeedCache } from './cache';
import { tenantOfAcervoToken } from './token';

/**
 * Rows between two position marks of the feed. A page at `offset` seeks to the mark at or below it and skips
 * fewer than this many index entries, whatever the offset: a page costs at most `MARK_STRIDE + limit` entries
 * of the feed's index.
 */
export const MARK_STRIDE = 1000;

/**
 * The feed's sort key of one row, the timestamps as PostgreSQL writes them as text (microseconds and offset
 * kept, so the seek compares exactly what is stored).
 */
interface FeedKey {
  published_at: string;
  created_at: string;
  id: string;
}

/** The feed's rows: the tenant's published, non-deleted documents (the `document_acervo_index` predicate). */
const feedRows = (tenantId: string): FilterQuery<DocumentEntity> => ({
  tenant: tenantId,
  published: true,
  deletedAt: null,
});

/**
 * Position marks of a tenant's feed: `marks[j]` is the key of the row at position `(j + 1) * MARK_STRIDE - 1`
 * (0-based, newest publication first). One pass over the feed's partial index (an index-only scan numbering
 * rows) that returns one row in `MARK_STRIDE`; computed once per state of the feed (`FeedMemo`), like the total.
 */
async function readMarks(em: EntityManager, tenantId: string): Promise<FeedKey[]> {
  return (em as SqlEntityManager).execute<FeedKey[]>(
    `select k.published_at::text as published_at, k.created_at::text as created_at, k.id::text as id
       from (select d.published_at, d.created_at, d.id,
                    row_number() over (order by d.published_at desc, d.created_at desc, d.id desc) as rn
               from document d
              where d.tenant_id = ? and d.published and d.deleted_at is null) k
      where k.rn % ? = 0
      order by k.rn`,
    [tenantId, MARK_STRIDE],
  );
}

/**
 * `GET /api/public/acervo` (spec, Acervo feed): the token's tenant's published, non-deleted documents, newest
 * publication first (`publishedAt desc, createdAt desc, id desc`), `limit` from `offset`, with the total count.
 * `title` falls back to the file name; `author` and `metadata` are empty strings when unset. Pages are cached 5
 * minutes (`AcervoFeedCache`), and so are the total and the position marks of the feed's current state: an
 * offset below `MARK_STRIDE` is read as it is, a deeper one seeks past the mark below it (keyset, an index
 * condition) and skips the rest, so a page's cost does not grow with the offset (docs/api.md, Acervo feed).
 * @throws AppError UNAUTHENTICATED without a valid acervo token.
 */
export async function readAcervoFeed(
  em: EntityManager,
  cache: AcervoFeedCache,
  bearer: string | null,
  page: { limit: number; offset: number },
): Promise<AcervoFeedDto> {
  const tenantId = await tenantOfAcervoToken(em, bearer);
  return cache.get(tenantId, page, async (memo) => {
    const total = await memo('total', () => em.count(Document, feedRows(tenantId)));
    if (page.offset >= total) return { documents: [], total };
    const where = feedRows(tenantId);
    let skip = page.offset;
    const below = Math.floor(page.offset / MARK_STRIDE);
    if (below > 0) {
      const marks = await memo('marks', () => readMarks(em, tenantId));
      const mark = marks[below - 1];
      if (mark) {
        skip = page.offset - below * MARK_STRIDE;
        Object.assign(where, {
          [raw(
            (alias) =>
              `(${alias}.published_at, ${alias}.created_at, ${alias}.id) < (?::timestamptz, ?::timestamptz, ?::uuid)`,
            [mark.published_at, mark.created_at, mark.id],
          )]: [],
        });
      }
    }
    const docs = await em.find(Document, where, {
      orderBy: { publishedAt: 'desc', createdAt: 'desc', id: 'desc' },
      limit: page.limit,
      offset: skip,
    });
    return {
      documents: docs.map((d) => ({
        serialNumber: d.serialNumber,
        title: d.acervoTitle || d.fileName,
        author: d.acervoAuthor ?? '',
        metadata: d.metadata ?? '',
        publishedAt: (d.publishedAt ?? d.createdAt).toISOString(),
      })),
      total,
    };
  });
}
