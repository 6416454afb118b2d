import { AppError, can, type Permission, ROLE_RANK, ROLES, type Role } from '@notary/shared';
import type { DocumentEntity } from '../../db/entities';
import type { Actor } from './actor';

/**
 * What an action needs of its caller: a column of the roles table (spec, Authentication: item 5, `upload` for
 * upload, capture and publish, `deleteTeamDocs`, `manageTeam`, `manageSettings`), or being the owner of one
 * document (spec, Authentication: item 6, "Access log: document owner only"; the same rule guards its access
 * policies and its LGPD deletion).
 */
export type Right = Permission | { documentOwner: Pick<DocumentEntity, 'uploaderUserId'> };

/** Who is asking: the role they hold in the tenant (a personal workspace's user acts as `owner`). */
export type Asker = Pick<Actor, 'role' | 'userId'>;

/**
 * Whether `actor` holds `right`. A document's owner is, in a personal workspace, its user; in an
 * organization, an admin or owner (`deleteTeamDocs`), or the member who uploaded it while they still hold a
 * role that may upload (editor or higher): an uploader demoted to reader keeps no rights over it. Other
 * editors are not owners. The document must already be known to be in the actor's tenant
 * (`findDocumentInTenant`).
 */
export function hasPermission(actor: Asker, right: Right): boolean {
  if (typeof right === 'string') return can(actor.role, right);
  if (can(actor.role, 'deleteTeamDocs')) return true;
  return right.documentOwner.uploaderUserId === actor.userId && can(actor.role, 'upload');
}

/**
 * The one way a domain rule refuses a caller for their role: nothing when `actor` holds `right`, otherwise
 * AppError FORBIDDEN (403, spec Errors: "insufficient org role") with one sentence naming the role, the
 * action and who may do it (`refusalMessage`).
 * @param what the action, as it completes "Your role (reader) cannot …", e.g. `upload documents to this
 *   organization`.
 * @throws AppError FORBIDDEN.
 */
export function requirePermission(actor: Asker, right: Right, what: string): void {
  if (!hasPermission(actor, right)) throw new AppError('FORBIDDEN', refusalMessage(actor.role, right, what));
}

/**
 * The sentence of a refusal: `Your role (<role>) cannot <what>: it takes <who>.`, where `<who>` is the lowest
 * role the roles table gives the permission to, "or higher" (e.g. `editor or higher`), or for a document's
 * owner `its uploader (while editor or higher), an admin or an owner`.
 */
export function refusalMessage(role: Role, right: Right, what: string): string {
  const who =
    typeof right === 'string'
      ? `${lowestRoleWith(right)} or higher`
      : `its uploader (while ${lowestRoleWith('upload')} or higher), an admin or an owner`;
  return `Your role (${role}) cannot ${what}: it takes ${who}.`;
}

/** The lowest-ranked role the roles table gives `permission` to (every permission has one: owner has all). */
function lowestRoleWith(permission: Permission): Role {
  const holders = ROLES.filter((r) => can(r, permission));
  return holders.reduce((low, r) => (ROLE_RANK[r] < ROLE_RANK[low] ? r : low), 'owner' as Role);
}
