import { AppError, can } from '@notary/shared';
import type { DocumentEntity } from '../../db/entities';
import type { Actor } from '../tenancy/actor';

/**
 * Whether `actor` counts as the owner of `doc` (spec, Authentication 6: "Access log: document owner only"), the
 * one rule for its access log, its access policies (create, list, revoke) and its LGPD deletion:
 * - in a personal workspace, its user (who acts there as `owner`);
 * - in an organization, an admin or owner (`deleteTeamDocs`), or the member who uploaded it while they still
 *   hold a role that may upload (editor or higher): an uploader demoted to reader keeps no rights over it.
 * Other editors of the same organization are not owners. `doc` must already be known to be in the actor's
 * tenant (`findDocumentInTenant`).
 */
export function isDocumentOwner(actor: Actor, doc: Pick<DocumentEntity, 'uploaderUserId'>): boolean {
  if (can(actor.role, 'deleteTeamDocs')) return true;
  return doc.uploaderUserId === actor.userId && can(actor.role, 'upload');
}

/**
 * @param action what the caller tried, completing "Only the document's owner ... can <action>".
 * @throws AppError FORBIDDEN unless `isDocumentOwner(actor, doc)`.
 */
export function requireDocumentOwner(
  actor: Actor,
  doc: Pick<DocumentEntity, 'uploaderUserId'>,
  action: string,
): void {
  if (!isDocumentOwner(actor, doc)) {
    throw new AppError(
      'FORBIDDEN',
      `Only the document's owner (its uploader while editor or higher, or an admin or owner of the organization) can ${action} (your role: ${actor.role})`,
    );
  }
}
