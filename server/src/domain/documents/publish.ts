import type { EntityManager } from '@mikro-orm/core';
import { AppError, type DocumentDto, type PublishInput } from '@notary/shared';
import { Document } from '../../db/entities';
import type { AcervoFeedCache } from '../acervo/cache';
import type { Actor } from '../tenancy/actor';
import { requirePermission } from '../tenancy/permissions';
import { toDocumentDto } from './projection';
import { assertNotDeleted, findDocumentInTenant } from './service';

/**
 * `PATCH /api/documents/:id/publish` (spec, Documents: rule 2, and States and transitions): sets `published`;
 * `publishedAt` is set when the document goes on the feed (kept while it stays there) and cleared when it
 * leaves. Only the curator fields sent are rewritten (`null` or an empty string clears one). Editor or higher
 * in an organization. The update is conditional on the document not being LGPD-deleted, so a publication
 * racing a deletion never puts a deleted document back on the feed.
 * @throws AppError FORBIDDEN (other tenant, below editor), NOT_FOUND, GONE (LGPD-deleted).
 */
export async function publishDocument(
  em: EntityManager,
  cache: AcervoFeedCache,
  actor: Actor,
  id: string,
  input: PublishInput,
): Promise<DocumentDto> {
  const doc = await findDocumentInTenant(em, actor, id);
  requirePermission(actor, 'upload', "publish this organization's documents");
  assertNotDeleted(doc);
  const changes: Partial<
    Pick<typeof doc, 'published' | 'publishedAt' | 'acervoTitle' | 'acervoAuthor' | 'metadata'>
  > = { published: input.published };
  if (!input.published) changes.publishedAt = null;
  else if (!doc.published || !doc.publishedAt) changes.publishedAt = new Date();
  if (input.title !== undefined) changes.acervoTitle = input.title || null;
  if (input.author !== undefined) changes.acervoAuthor = input.author || null;
  if (input.metadata !== undefined) changes.metadata = input.metadata || null;
  const updated = await em.nativeUpdate(Document, { id: doc.id, deletedAt: null }, changes);
  if (updated === 0) {
    throw new AppError('GONE', 'This document was deleted under the LGPD; only its hash remains on record');
  }
  cache.invalidate(doc.tenant.id);
  return toDocumentDto(await em.findOneOrFail(Document, { id: doc.id }, { refresh: true }));
}
