import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { AppError, can, type LgpdDeletionDto } from '@notary/shared';
import type { ObjectStorage } from '../../adapters/storage/port';
import { AccessPolicy, DocumentDeletion } from '../../db/entities';
import type { AcervoFeedCache } from '../acervo/cache';
import type { Actor } from '../tenancy/actor';
import { assertNotDeleted, findDocumentInTenant } from './service';

/**
 * `DELETE /api/documents/:id`: the LGPD deletion of a document (spec, item 8; README, LGPD deletion).
 * Who: its uploader, or an admin or owner of the organization (`deleteTeamDocs`); in a personal workspace its
 * owner. Steps:
 * 1. the stored objects (file, screenshot) are destroyed (a delete of a missing object succeeds, so a retry
 *    after a failure here or below does it again harmlessly);
 * 2. one transaction: the row is marked deleted only if it was not already (a second or concurrent deletion
 *    answers 410); its storage keys, publication, curator fields and uploader IP are cleared while its hash,
 *    serial number, file name, anchors and proofs stay on record; every access policy still in force is
 *    revoked; the audit trail row (who, role, IP, when, reason) is written.
 * Afterwards the document leaves `GET /api/documents` and the acervo feed, download, view and publish answer
 * 410, every share answers 410, and public verification by hash or serial still finds it.
 * @throws AppError FORBIDDEN (other tenant; neither uploader nor admin+), NOT_FOUND, GONE (already deleted).
 */
export async function deleteDocumentUnderLgpd(
  em: EntityManager,
  deps: { storage: ObjectStorage; acervoCache: AcervoFeedCache },
  actor: Actor,
  id: string,
  reason: string | undefined,
): Promise<LgpdDeletionDto> {
  const doc = await findDocumentInTenant(em, actor, id);
  if (doc.uploaderUserId !== actor.userId && !can(actor.role, 'deleteTeamDocs')) {
    throw new AppError(
      'FORBIDDEN',
      `Only the uploader or an admin or owner can delete this document (your role: ${actor.role})`,
    );
  }
  assertNotDeleted(doc);
  for (const key of [doc.storageKey, doc.screenshotKey]) {
    if (key) await deps.storage.delete(key);
  }
  const deletedAt = new Date();
  await em.transactional(async (tx) => {
    const rows: { id: string }[] = await (tx as SqlEntityManager).execute(
      `update document
          set deleted_at = ?::timestamptz, storage_key = null, screenshot_key = null, published = false,
              published_at = null, acervo_title = null, acervo_author = null, metadata = null, uploader_ip = null
        where id = ?::uuid and deleted_at is null
       returning id`,
      [deletedAt, doc.id],
    );
    if (rows.length === 0) {
      throw new AppError('GONE', 'This document was deleted under the LGPD; only its hash remains on record');
    }
    await tx.nativeUpdate(AccessPolicy, { document: doc.id, revokedAt: null }, { revokedAt: deletedAt });
    tx.create(DocumentDeletion, {
      id: crypto.randomUUID(),
      document: doc.id,
      tenant: doc.tenant.id,
      deletedBy: actor.userId,
      deletedByEmail: actor.email,
      role: actor.role,
      ip: actor.ip,
      reason: reason?.trim() || null,
      deletedAt,
    });
    await tx.flush();
  });
  deps.acervoCache.invalidate(doc.tenant.id);
  return {
    ok: true,
    documentId: doc.id,
    serialNumber: doc.serialNumber,
    sha256Hash: doc.sha256Hash,
    deletedAt: deletedAt.toISOString(),
  };
}
