/**
 * Organization roles and the permission matrix (spec, Authentication: item 5, the roles table).
 * Personal workspaces are unrestricted for their owner, who acts there as `owner`.
 */
export const ROLES = ['owner', 'admin', 'editor', 'reader'] as const;
export type Role = (typeof ROLES)[number];

/**
 * `recordActs`: record, change or remove the notarial act (MNE, selo, book and page) of a document; the same
 * holders as `upload` (whoever may notarize may say which act the document belongs to).
 */
export type Permission = 'upload' | 'recordActs' | 'deleteTeamDocs' | 'manageTeam' | 'manageSettings';

const MATRIX: Record<Role, ReadonlySet<Permission>> = {
  owner: new Set(['upload', 'recordActs', 'deleteTeamDocs', 'manageTeam', 'manageSettings']),
  admin: new Set(['upload', 'recordActs', 'deleteTeamDocs', 'manageTeam', 'manageSettings']),
  editor: new Set(['upload', 'recordActs']),
  reader: new Set(),
};

/** Rank used for "nobody manages above their own role": higher is more powerful. */
export const ROLE_RANK: Record<Role, number> = { owner: 3, admin: 2, editor: 1, reader: 0 };

/** Whether `role` grants `permission` (spec, Authentication: item 5, the roles table). */
export function can(role: Role, permission: Permission): boolean {
  return MATRIX[role].has(permission);
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/**
 * Whether `actor` may change or remove a member who has role `target` (spec, Team: rules, nobody manages a
 * member above their own role). Managing at all needs `manageTeam` (admin or owner).
 */
export function canManageMember(actor: Role, target: Role): boolean {
  return can(actor, 'manageTeam') && ROLE_RANK[target] <= ROLE_RANK[actor];
}

/** Whether `actor` may give someone `role` (invite or change): never above their own role. */
export function canAssignRole(actor: Role, role: Role): boolean {
  return can(actor, 'manageTeam') && ROLE_RANK[role] <= ROLE_RANK[actor];
}
