import type { EntityManager } from '@mikro-orm/core';
import type { AccessLogDto } from '@notary/shared';
import { AccessLogEntry } from '../../db/entities';
import { findDocumentInTenant } from '../documents/service';
import type { Actor } from '../tenancy/actor';
import { requirePermission } from '../tenancy/permissions';

/** Most entries one access log answer holds (the newest). */
export const ACCESS_LOG_MAX_ENTRIES = 1000;

/**
 * `GET /access-log/:documentId` (spec, Access log: "document owner only"). The document's owner is, in a
 * personal workspace, its user; in an organization, the member who uploaded it while still editor or higher,
 * and the organization's admins and owners (`requirePermission` with `documentOwner`, the same rule as its
 * access policies and its LGPD deletion). Newest first, at most `ACCESS_LOG_MAX_ENTRIES`; kept after
 * policies are revoked and after an LGPD deletion (the record of who received the file).
 * @throws AppError FORBIDDEN (other tenant, or not the document's owner), NOT_FOUND.
 */
export async function readAccessLog(
  em: EntityManager,
  actor: Actor,
  documentId: string,
): Promise<AccessLogDto> {
  const doc = await findDocumentInTenant(em, actor, documentId);
  requirePermission(actor, { documentOwner: doc }, "read this document's access log");
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
