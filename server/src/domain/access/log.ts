import type { EntityManager } from '@mikro-orm/core';
import { type AccessLogDto, AppError, can } from '@notary/shared';
import { AccessLogEntry } from '../../db/entities';
import { findDocumentInTenant } from '../documents/service';
import type { Actor } from '../tenancy/actor';

/** Most entries one access log answer holds (the newest). */
export const ACCESS_LOG_MAX_ENTRIES = 1000;

/**
 * `GET /access-log/:documentId` (spec, Access log: "document owner only"). The document's owner is, in a
 * personal workspace, its user; in an organization, the member who uploaded it, and the organization's admins
 * and owners (who may also delete it). Newest first, at most `ACCESS_LOG_MAX_ENTRIES`; kept after policies
 * are revoked and after an LGPD deletion (the record of who received the file).
 * @throws AppError FORBIDDEN (other tenant, or not the document's owner), NOT_FOUND.
 */
export async function readAccessLog(
  em: EntityManager,
  actor: Actor,
  documentId: string,
): Promise<AccessLogDto> {
  const doc = await findDocumentInTenant(em, actor, documentId);
  if (doc.uploaderUserId !== actor.userId && !can(actor.role, 'deleteTeamDocs')) {
    throw new AppError(
      'FORBIDDEN',
      "Only the document's owner (its uploader, or an admin or owner of the organization) can read its access log",
    );
  }
  const entries = await em.find(
    AccessLogEntry,
    { document: doc.id },
    { orderBy: { createdAt: 'desc', id: 'desc' }, limit: ACCESS_LOG_MAX_ENTRIES },
  );
  return {
    log: entries.map((e) => ({
      id: e.id,
      accessorType: e.accessorType,
      accessorIdentifier: e.accessorIdentifier,
      permission: e.permission,
      ip: e.ip ?? '',
      createdAt: e.createdAt.toISOString(),
    })),
  };
}
