import type { EntityManager } from '@mikro-orm/core';
import type { AcervoFeedDto } from '@notary/shared';
import { Document } from '../../db/entities';
import type { AcervoFeedCache } from './cache';
import { tenantOfAcervoToken } from './token';

/**
 * `GET /api/public/acervo` (spec, Acervo feed): the token's tenant's published, non-deleted documents, newest
 * publication first, `limit` from `offset`, with the total count. `title` falls back to the file name;
 * `author` and `metadata` are empty strings when unset. Pages are cached 5 minutes (`AcervoFeedCache`).
 * @throws AppError UNAUTHENTICATED without a valid acervo token.
 */
export async function readAcervoFeed(
  em: EntityManager,
  cache: AcervoFeedCache,
  bearer: string | null,
  page: { limit: number; offset: number },
): Promise<AcervoFeedDto> {
  const tenantId = await tenantOfAcervoToken(em, bearer);
  return cache.get(tenantId, page, async () => {
    const [docs, total] = await em.findAndCount(
      Document,
      { tenant: tenantId, published: true, deletedAt: null },
      {
        orderBy: { publishedAt: 'desc', createdAt: 'desc', id: 'desc' },
        limit: page.limit,
        offset: page.offset,
      },
    );
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
