import type { EntityManager } from '@mikro-orm/core';
import { isRole, type Role } from '@notary/shared';
import { Tenant, type TenantEntity, TenantMember } from '../../db/entities';
import type {
  DirectoryMember,
  DirectoryOrganization,
  MembershipEvent,
  OrganizationDirectory,
} from '../../ports/directory';
import { ensureOrganizationTenant, setTenantRole } from './resolve';

/**
 * Keeps the service's role table (`tenant_member`) in step with the identity provider's memberships
 * (DESIGN.md, Identity and tenancy; spec, Team: "memberships are kept by the identity provider").
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
 */

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

/**
 * Makes the rows of `tenant` equal to `members`: inserts the missing ones and updates changed roles in one
 * statement, deletes the rows of people no longer members in another. `rows` are the tenant's current rows.
 * Members whose provider role is none of the service's roles are treated as absent (least privilege).
 */
async function syncTenant(
  em: EntityManager,
  tenant: TenantEntity,
  rows: readonly { userId: string; role: Role }[],
  members: readonly Pick<DirectoryMember, 'userId' | 'role'>[],
): Promise<ReconcileSummary> {
  const want = new Map<string, Role>();
  for (const m of members) if (isRole(m.role)) want.set(m.userId, m.role);
  const have = new Map(rows.map((r) => [r.userId, r.role]));
  const upserts: { userId: string; role: Role }[] = [];
  let added = 0;
  let updated = 0;
  for (const [userId, role] of want) {
    const current = have.get(userId);
    if (current === role) continue;
    if (current === undefined) added++;
    else updated++;
    upserts.push({ userId, role });
  }
  const gone = [...have.keys()].filter((userId) => !want.has(userId));
  if (upserts.length > 0) {
    await em.upsertMany(
      TenantMember,
      upserts.map(({ userId, role }) => ({ id: crypto.randomUUID(), tenant, userId, role })),
      { onConflictFields: ['tenant', 'userId'], onConflictMergeFields: ['role', 'updatedAt'] },
    );
  }
  if (gone.length > 0) await em.nativeDelete(TenantMember, { tenant: tenant.id, userId: { $in: gone } });
  return { organizations: 1, added, updated, removed: gone.length };
}

/** The organization tenants and their member rows, grouped by tenant id, read in two queries. */
async function loadOrganizationRows(
  em: EntityManager,
  where: { externalId?: string } = {},
): Promise<{ tenants: TenantEntity[]; rowsByTenant: Map<string, { userId: string; role: Role }[]> }> {
  const tenants = await em.find(Tenant, { kind: 'organization', ...where });
  const rowsByTenant = new Map<string, { userId: string; role: Role }[]>(tenants.map((t) => [t.id, []]));
  if (tenants.length > 0) {
    const rows = await em.find(
      TenantMember,
      { tenant: { $in: tenants.map((t) => t.id) } },
      { fields: ['tenant', 'userId', 'role'] },
    );
    for (const row of rows) rowsByTenant.get(row.tenant.id)?.push({ userId: row.userId, role: row.role });
  }
  return { tenants, rowsByTenant };
}

/**
 * Reconciles one organization: its rows become the provider's member list (missing members added, roles
 * updated, former members removed). An organization unknown to the provider loses all its member rows.
 * Cost: two queries to read, two provider reads (organization, members), at most two statements to write,
 * whatever the team size. The table is read before the provider, so a membership created meanwhile is not
 * taken for a stale one; provider calls stay outside the write transaction (on PGlite a second connection
 * awaited inside a transaction would deadlock).
 * @throws AppError BAD_GATEWAY when the provider fails (nothing is changed then).
 */
export async function reconcileOrganization(
  em: EntityManager,
  directory: Pick<OrganizationDirectory, 'getOrganization' | 'listMembers'>,
  organizationId: string,
): Promise<ReconcileSummary> {
  const { tenants, rowsByTenant } = await loadOrganizationRows(em, { externalId: organizationId });
  const organization = await directory.getOrganization(organizationId);
  const members = organization ? await directory.listMembers(organizationId) : [];
  const existing = tenants[0];
  if (!existing && !organization) return emptySummary();
  return em.transactional(async (tx) => {
    const tenant = existing ?? (organization ? await ensureOrganizationTenant(tx, organization) : undefined);
    if (!tenant) return emptySummary();
    return syncTenant(tx, tenant, rowsByTenant.get(tenant.id) ?? [], members);
  });
}

/**
 * Reconciles every organization: each one the provider lists (tenants created for those the service never
 * saw), and every organization tenant the provider no longer lists (its member rows are removed; documents
 * stay). The table is read in two queries (tenants, rows) before asking the provider, which is asked once per
 * organization for its members: no query per member. One organization failing at the provider does not stop
 * the others; the first such error is thrown at the end, after every other organization was reconciled.
 * `directory.listOrganizations()` must return every organization: one it leaves out loses its member rows.
 * @throws AppError BAD_GATEWAY when the provider cannot list the organizations or an organization's members.
 */
export async function reconcileAll(
  em: EntityManager,
  directory: Pick<OrganizationDirectory, 'listOrganizations' | 'listMembers'>,
): Promise<ReconcileSummary> {
  const { tenants, rowsByTenant } = await loadOrganizationRows(em);
  const tenantByOrg = new Map(tenants.map((t) => [t.externalId, t]));
  const organizations: DirectoryOrganization[] = await directory.listOrganizations();
  const summary = emptySummary();
  let firstError: unknown;
  const listed = new Set<string>();
  for (const organization of organizations) {
    listed.add(organization.id);
    try {
      const members = await directory.listMembers(organization.id);
      const result = await em.transactional(async (tx) => {
        const tenant = tenantByOrg.get(organization.id) ?? (await ensureOrganizationTenant(tx, organization));
        return syncTenant(tx, tenant, rowsByTenant.get(tenant.id) ?? [], members);
      });
      addSummary(summary, result);
    } catch (e) {
      firstError ??= e;
    }
  }

  // Tenants of organizations the provider no longer lists (deleted while no event reached the service).
  const orphaned = tenants.filter(
    (t) => !listed.has(t.externalId) && (rowsByTenant.get(t.id)?.length ?? 0) > 0,
  );
  if (orphaned.length > 0) {
    summary.removed += await em.nativeDelete(TenantMember, { tenant: { $in: orphaned.map((t) => t.id) } });
    summary.organizations += orphaned.length;
  }
  if (firstError !== undefined) throw firstError;
  return summary;
}
