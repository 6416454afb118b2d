import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { AppError, isRole, type Role } from '@notary/shared';
import { Tenant, type TenantEntity, TenantMember } from '../../db/entities';
import type {
  DirectoryMember,
  DirectoryOrganization,
  MembershipEvent,
  OrganizationDirectory,
} from '../../ports/directory';
import { cancelInvitationsNoLongerGrantable, type RoleChange } from '../team/grants';
import { ensureOrganizationTenant, setTenantRole } from './resolve';

/**
 * Keeps the service's role table (`tenant_member`) in step with the identity provider's memberships (spec, Team:
 * "memberships are kept by the identity provider").
 *
 * Two paths lead here: membership events (the in-process provider's hooks, a hosted provider's webhook) are
 * applied one by one with `applyMembershipEvent`, and a periodic `reconcileAll` (jobs/reconcile.ts) repairs
 * whatever the events missed. Authorization reads only the table; a membership the table lacks is asked of the
 * provider on first use (`resolveTenant`), so a missing row never grants access and a removed row only costs
 * one provider look-up. The provider is the source of truth for who is a member and with which role.
 *
 * Organizations the service never saw get their tenant created by the reconcile (so the table mirrors the
 * provider fully); an organization gone at the provider loses its member rows, never its documents (deleting
 * those is the organization-deletion flow's job).
 *
 * A role lowered or a membership ended on either path first cancels the member's pending invitations that the
 * new role could not give (`cancelInvitationsNoLongerGrantable`, as the team routes do).
 */

/** What the reconcile asks of the provider. */
export type ReconcileDirectory = Pick<
  OrganizationDirectory,
  'listOrganizations' | 'listMembers' | 'listInvitations' | 'cancelInvitation'
>;

/** What a reconcile changed in the role table. */
export interface ReconcileSummary {
  /** Organizations compared with the provider. */
  organizations: number;
  /** Rows inserted (members the table lacked). */
  added: number;
  /** Rows whose role changed to the provider's. */
  updated: number;
  /** Rows deleted (people no longer members, or members of organizations gone at the provider). */
  removed: number;
}

/** What `applyMembershipEvent` did. */
export type MembershipEventOutcome = 'applied' | 'unknown-organization' | 'ignored';

const emptySummary = (): ReconcileSummary => ({ organizations: 0, added: 0, updated: 0, removed: 0 });

function addSummary(into: ReconcileSummary, more: ReconcileSummary): void {
  into.organizations += more.organizations;
  into.added += more.added;
  into.updated += more.updated;
  into.removed += more.removed;
}

/**
 * Applies one membership event of the provider to the role table.
 * - `member.upserted`: inserts the row or sets its role.
 * - `member.removed`: deletes the row (the member's tokens stop working at once: `resolveTenant` then asks the
 *   provider, which says no).
 * - `organization.deleted`: deletes every member row of the organization's tenant; the tenant and its
 *   documents stay (the organization-deletion flow removes documents and files).
 *
 * An organization the service has no tenant for is skipped (`unknown-organization`: nothing to update; the
 * first request or the next reconcile creates it), unless `options.organization` names it (a webhook payload
 * carries the organization's name and slug), in which case its tenant is created first.
 * An upsert with a role that is not one of the service's roles is `ignored` (least privilege).
 */
export async function applyMembershipEvent(
  em: EntityManager,
  event: MembershipEvent,
  options: { organization?: { id: string; name: string; slug: string } } = {},
): Promise<MembershipEventOutcome> {
  if (event.type === 'member.upserted' && !isRole(event.role)) return 'ignored';
  let tenant = await em.findOne(Tenant, { kind: 'organization', externalId: event.organizationId });
  if (!tenant && event.type === 'member.upserted' && options.organization?.id === event.organizationId) {
    tenant = await ensureOrganizationTenant(em, options.organization);
  }
  if (!tenant) return 'unknown-organization';
  switch (event.type) {
    case 'member.upserted':
      await setTenantRole(em, tenant, event.userId, event.role);
      return 'applied';
    case 'member.removed':
      await em.nativeDelete(TenantMember, { tenant: tenant.id, userId: event.userId });
      return 'applied';
    case 'organization.deleted':
      await em.nativeDelete(TenantMember, { tenant: tenant.id });
      return 'applied';
  }
}

/** The role changes a membership event makes, for the invitation rule (none for an organization gone). */
function eventRoleChanges(event: MembershipEvent): RoleChange[] {
  switch (event.type) {
    case 'member.upserted':
      return isRole(event.role)
        ? [{ userId: event.userId, role: event.role }]
        : [{ userId: event.userId, role: null }];
    case 'member.removed':
      return [{ userId: event.userId, role: null }];
    case 'organization.deleted':
      return [];
  }
}

/**
 * Before membership events are applied (the identity webhook): cancels, per organization, the pending
 * invitations their members could no longer give with the roles the events carry (one invitation listing per
 * organization). An organization the directory does not know has no invitations there: nothing to cancel.
 * @returns how many invitations were canceled.
 * @throws AppError BAD_GATEWAY on provider error (apply nothing then: the provider retries the delivery).
 */
export async function cancelInvitationsForEvents(
  directory: Pick<OrganizationDirectory, 'listInvitations' | 'cancelInvitation'>,
  events: readonly MembershipEvent[],
): Promise<number> {
  const byOrganization = new Map<string, RoleChange[]>();
  for (const event of events) {
    const changes = eventRoleChanges(event);
    if (changes.length === 0) continue;
    const list = byOrganization.get(event.organizationId) ?? [];
    list.push(...changes);
    byOrganization.set(event.organizationId, list);
  }
  let canceled = 0;
  for (const [organizationId, changes] of byOrganization) {
    try {
      canceled += await cancelInvitationsNoLongerGrantable(directory, organizationId, changes);
    } catch (e) {
      if (e instanceof AppError && e.code === 'NOT_FOUND') continue;
      throw e;
    }
  }
  return canceled;
}

/** What `syncTenant` will write: the rows to upsert and the members to delete, counted. */
interface SyncPlan {
  upserts: { userId: string; role: Role }[];
  gone: string[];
  added: number;
  updated: number;
  /** Members whose role changed or who left: the invitation rule applies to them. */
  changes: RoleChange[];
}

/**
 * What makes the rows `rows` of a tenant equal to `members`: missing ones inserted, changed roles updated,
 * people no longer members deleted. Members whose provider role is none of the service's roles are treated as
 * absent (least privilege).
 */
function planSync(
  rows: readonly { userId: string; role: Role }[],
  members: readonly Pick<DirectoryMember, 'userId' | 'role'>[],
): SyncPlan {
  const want = new Map<string, Role>();
  for (const m of members) if (isRole(m.role)) want.set(m.userId, m.role);
  const have = new Map(rows.map((r) => [r.userId, r.role]));
  const plan: SyncPlan = { upserts: [], gone: [], added: 0, updated: 0, changes: [] };
  for (const [userId, role] of want) {
    const current = have.get(userId);
    if (current === role) continue;
    if (current === undefined) plan.added++;
    else {
      plan.updated++;
      plan.changes.push({ userId, role });
    }
    plan.upserts.push({ userId, role });
  }
  for (const userId of have.keys()) {
    if (want.has(userId)) continue;
    plan.gone.push(userId);
    plan.changes.push({ userId, role: null });
  }
  return plan;
}

/** Writes `plan` to `tenant`'s rows: one upsert statement, one delete statement (each only when needed). */
async function applyPlan(em: EntityManager, tenant: TenantEntity, plan: SyncPlan): Promise<ReconcileSummary> {
  if (plan.upserts.length > 0) {
    await em.upsertMany(
      TenantMember,
      plan.upserts.map(({ userId, role }) => ({ id: crypto.randomUUID(), tenant, userId, role })),
      { onConflictFields: ['tenant', 'userId'], onConflictMergeFields: ['role', 'updatedAt'] },
    );
  }
  if (plan.gone.length > 0) {
    await em.nativeDelete(TenantMember, { tenant: tenant.id, userId: { $in: plan.gone } });
  }
  return { organizations: 1, added: plan.added, updated: plan.updated, removed: plan.gone.length };
}

/**
 * The organization tenants of the organizations `organizationIds` and their member rows, grouped by tenant id,
 * read in two queries (a page of organizations at a time, never the whole table).
 */
async function loadOrganizationRows(
  em: EntityManager,
  organizationIds: readonly string[],
): Promise<{
  tenantByOrg: Map<string, TenantEntity>;
  rowsByTenant: Map<string, { userId: string; role: Role }[]>;
}> {
  const tenants =
    organizationIds.length === 0
      ? []
      : await em.find(Tenant, { kind: 'organization', externalId: { $in: [...organizationIds] } });
  const rowsByTenant = new Map<string, { userId: string; role: Role }[]>(tenants.map((t) => [t.id, []]));
  if (tenants.length > 0) {
    const rows = await em.find(
      TenantMember,
      { tenant: { $in: tenants.map((t) => t.id) } },
      { fields: ['tenant', 'userId', 'role'] },
    );
    for (const row of rows) rowsByTenant.get(row.tenant.id)?.push({ userId: row.userId, role: row.role });
  }
  return { tenantByOrg: new Map(tenants.map((t) => [t.externalId, t])), rowsByTenant };
}

/**
 * Reconciles one organization: its rows become the provider's member list (missing members added, roles
 * updated, former members removed, after their invitations they could no longer give are canceled). An
 * organization unknown to the provider loses all its member rows. Cost: two queries to read, two provider
 * reads (organization, members) plus one invitation listing when a role went down or a member left, at most
 * two statements to write, whatever the team size. The table is read before the provider, so a membership
 * created meanwhile is not taken for a stale one; provider calls stay outside the write transaction (on PGlite
 * a second connection awaited inside a transaction would deadlock).
 * @throws AppError BAD_GATEWAY when the provider fails (nothing is changed then).
 */
export async function reconcileOrganization(
  em: EntityManager,
  directory: Pick<
    OrganizationDirectory,
    'getOrganization' | 'listMembers' | 'listInvitations' | 'cancelInvitation'
  >,
  organizationId: string,
): Promise<ReconcileSummary> {
  const { tenantByOrg, rowsByTenant } = await loadOrganizationRows(em, [organizationId]);
  const organization = await directory.getOrganization(organizationId);
  const members = organization ? await directory.listMembers(organizationId) : [];
  const existing = tenantByOrg.get(organizationId);
  if (!existing && !organization) return emptySummary();
  const plan = planSync(existing ? (rowsByTenant.get(existing.id) ?? []) : [], members);
  if (organization) await cancelInvitationsNoLongerGrantable(directory, organizationId, plan.changes);
  return em.transactional(async (tx) => {
    const tenant = existing ?? (organization ? await ensureOrganizationTenant(tx, organization) : undefined);
    if (!tenant) return emptySummary();
    return applyPlan(tx, tenant, plan);
  });
}

/** Organizations reconciled per page: their tenants and rows are read in one query each. */
const RECONCILE_PAGE = 100;
/** Organization tenants checked per query for organizations the provider no longer lists. */
const ORPHAN_PAGE = 500;

/**
 * Reconciles every organization: each one the provider lists (tenants created for those the service never
 * saw), and every organization tenant the provider no longer lists (its member rows are removed; documents
 * stay). The provider's organizations are taken `RECONCILE_PAGE` at a time: for each page the table is read in
 * two queries (tenants, rows), before asking the provider, which is asked once per organization for its
 * members (the directory has no batch listing) and once for its invitations only when a role went down or a
 * member left; writes happen only for organizations whose rows differ. No query per member. Tenants the
 * provider no longer lists are then found a page of tenants with rows at a time, by id, their rows deleted in
 * one statement per page. Memory holds a page of rows plus the provider's organization ids (the directory lists
 * organizations whole).
 * One organization failing at the provider does not stop the others; the first such error is thrown at the
 * end, after every other organization was reconciled.
 * `directory.listOrganizations()` must return every organization: one it leaves out loses its member rows.
 * @throws AppError BAD_GATEWAY when the provider cannot list the organizations or an organization's members.
 */
export async function reconcileAll(
  em: EntityManager,
  directory: ReconcileDirectory,
): Promise<ReconcileSummary> {
  const organizations: DirectoryOrganization[] = await directory.listOrganizations();
  const summary = emptySummary();
  let firstError: unknown;
  const listed = new Set<string>();
  for (let start = 0; start < organizations.length; start += RECONCILE_PAGE) {
    const page = organizations.slice(start, start + RECONCILE_PAGE);
    for (const organization of page) listed.add(organization.id);
    const { tenantByOrg, rowsByTenant } = await loadOrganizationRows(
      em,
      page.map((o) => o.id),
    );
    for (const organization of page) {
      try {
        const members = await directory.listMembers(organization.id);
        const known = tenantByOrg.get(organization.id);
        const plan = planSync(known ? (rowsByTenant.get(known.id) ?? []) : [], members);
        if (known && plan.upserts.length === 0 && plan.gone.length === 0) {
          summary.organizations++;
          continue;
        }
        await cancelInvitationsNoLongerGrantable(directory, organization.id, plan.changes);
        const result = await em.transactional(async (tx) =>
          applyPlan(tx, known ?? (await ensureOrganizationTenant(tx, organization)), plan),
        );
        addSummary(summary, result);
      } catch (e) {
        firstError ??= e;
      }
    }
  }

  // Tenants of organizations the provider no longer lists (deleted while no event reached the service).
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const page: { id: string; external_id: string }[] = await (em as SqlEntityManager).execute(
      `select t.id, t.external_id from tenant t
        where t.kind = 'organization' and t.id > ?
          and exists (select 1 from tenant_member m where m.tenant_id = t.id)
        order by t.id limit ?`,
      [after, ORPHAN_PAGE],
    );
    const orphaned = page.filter((t) => !listed.has(t.external_id)).map((t) => t.id);
    if (orphaned.length > 0) {
      summary.removed += await em.nativeDelete(TenantMember, { tenant: { $in: orphaned } });
      summary.organizations += orphaned.length;
    }
    const last = page.at(-1);
    if (!last || page.length < ORPHAN_PAGE) break;
    after = last.id;
  }
  if (firstError !== undefined) throw firstError;
  return summary;
}
