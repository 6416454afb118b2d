import type { MikroORM as PgliteORM } from '@mikro-orm/pglite';
import { AppError, type Role } from '@notary/shared';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Document, Tenant, TenantMember } from '../../db/entities';
import { openMemoryOrm } from '../../db/memory-orm.testing';
import type {
  DirectoryInvitation,
  DirectoryMember,
  DirectoryOrganization,
  OrganizationDirectory,
} from '../../ports/directory';
import {
  applyMembershipEvent,
  cancelInvitationsForEvents,
  reconcileAll,
  reconcileOrganization,
} from './reconcile';
import { ensureOrganizationTenant, type MembershipLookup, resolveTenant, setTenantRole } from './resolve';

type FakeDirectory = Pick<
  OrganizationDirectory,
  'getOrganization' | 'listOrganizations' | 'listMembers' | 'listInvitations' | 'cancelInvitation'
> &
  MembershipLookup & {
    orgs: Map<string, DirectoryOrganization>;
    members: Map<string, Map<string, Role>>;
    invitations: DirectoryInvitation[];
    calls: { listMembers: number; listInvitations: number };
  };

/** An in-memory provider: organizations and their members, with a call counter. */
function fakeDirectory(): FakeDirectory {
  const orgs = new Map<string, DirectoryOrganization>();
  const members = new Map<string, Map<string, Role>>();
  const calls = { listMembers: 0, listInvitations: 0 };
  const invitations: DirectoryInvitation[] = [];
  const toMember = (userId: string, role: Role): DirectoryMember => ({
    userId,
    role,
    email: `${userId}@example.com`,
    name: userId,
    imageUrl: '',
    joinedAt: new Date(),
  });
  return {
    orgs,
    members,
    invitations,
    calls,
    listInvitations: async (id) => {
      calls.listInvitations++;
      return invitations.filter((i) => i.organizationId === id && i.status === 'pending');
    },
    cancelInvitation: async (id) => {
      const found = invitations.find((i) => i.id === id);
      if (found) found.status = 'canceled';
    },
    getOrganization: async (id) => orgs.get(id) ?? null,
    listOrganizations: async () => [...orgs.values()],
    listMembers: async (id) => {
      calls.listMembers++;
      return [...(members.get(id) ?? new Map<string, Role>())].map(([u, r]) => toMember(u, r));
    },
    getMembership: async (organizationId, userId) => {
      const org = orgs.get(organizationId);
      const role = members.get(organizationId)?.get(userId);
      return org && role ? { role, organizationName: org.name, organizationSlug: org.slug } : null;
    },
  };
}

function addOrg(dir: FakeDirectory, id: string, roles: Record<string, Role>): DirectoryOrganization {
  const org = { id, name: `Org ${id}`, slug: id, description: '', createdAt: new Date() };
  dir.orgs.set(id, org);
  dir.members.set(id, new Map(Object.entries(roles)));
  return org;
}

describe('role table reconciliation (PGlite)', () => {
  let orm: PgliteORM;
  const queries: string[] = [];

  beforeAll(async () => {
    orm = await openMemoryOrm({
      debug: ['query'],
      logger: (message: string) => queries.push(message),
    });
    await orm.migrator.up();
  });
  afterAll(async () => {
    await orm?.close();
  });
  beforeEach(async () => {
    const em = orm.em.fork();
    await em.nativeDelete(Tenant, {});
  });

  /** The organization's rows as `{userId: role}`. */
  async function rowsOf(organizationId: string): Promise<Record<string, Role>> {
    const rows = await orm.em
      .fork()
      .find(TenantMember, { tenant: { kind: 'organization', externalId: organizationId } });
    return Object.fromEntries(rows.map((r) => [r.userId, r.role]));
  }

  it('applies upsert, role change, removal; organization.deleted keeps the tenant and its documents', async () => {
    const em = orm.em.fork();
    const tenant = await ensureOrganizationTenant(em, { id: 'org-a', name: 'A', slug: 'a' });
    em.create(Document, {
      id: crypto.randomUUID(),
      tenant,
      serialNumber: 'AORG-0000000001',
      fileName: 'f.txt',
      fileSize: 1,
      mimeType: 'text/plain',
      sha256Hash: '0'.repeat(64),
      sourceType: 'upload',
      consentGiven: true,
      consentTimestamp: new Date(),
      uploaderUserId: 'u1',
    });
    await em.flush();

    const up = (userId: string, role: Role) =>
      applyMembershipEvent(orm.em.fork(), { type: 'member.upserted', organizationId: 'org-a', userId, role });
    expect(await up('u1', 'owner')).toBe('applied');
    expect(await up('u2', 'reader')).toBe('applied');
    expect(await up('u2', 'editor')).toBe('applied');
    expect(await rowsOf('org-a')).toEqual({ u1: 'owner', u2: 'editor' });

    await applyMembershipEvent(orm.em.fork(), {
      type: 'member.removed',
      organizationId: 'org-a',
      userId: 'u2',
    });
    expect(await rowsOf('org-a')).toEqual({ u1: 'owner' });

    await applyMembershipEvent(orm.em.fork(), { type: 'organization.deleted', organizationId: 'org-a' });
    expect(await rowsOf('org-a')).toEqual({});
    const check = orm.em.fork();
    expect(await check.count(Tenant, { externalId: 'org-a' })).toBe(1);
    expect(await check.count(Document, { tenant: tenant.id })).toBe(1);
  });

  it('skips an organization it never saw, unless the event names it; ignores foreign roles', async () => {
    const event = {
      type: 'member.upserted',
      organizationId: 'org-new',
      userId: 'u1',
      role: 'admin',
    } as const;
    expect(await applyMembershipEvent(orm.em.fork(), event)).toBe('unknown-organization');
    expect(await orm.em.fork().count(Tenant, { externalId: 'org-new' })).toBe(0);
    const organization = { id: 'org-new', name: 'New', slug: 'new-org' };
    expect(await applyMembershipEvent(orm.em.fork(), event, { organization })).toBe('applied');
    expect(await rowsOf('org-new')).toEqual({ u1: 'admin' });
    const tenant = await orm.em.fork().findOneOrFail(Tenant, { externalId: 'org-new' });
    expect(tenant.serialPrefix).toBe('NEWORG');

    const foreign = { ...event, userId: 'u2', role: 'superuser' as Role };
    expect(await applyMembershipEvent(orm.em.fork(), foreign)).toBe('ignored');
    expect(
      await applyMembershipEvent(orm.em.fork(), {
        type: 'member.removed',
        organizationId: 'org-unknown',
        userId: 'u1',
      }),
    ).toBe('unknown-organization');
  });

  it('reconcileOrganization adds missing members, updates roles and removes former members', async () => {
    const dir = fakeDirectory();
    const org = addOrg(dir, 'org-b', { u1: 'owner', u2: 'admin', u3: 'reader' });
    const em = orm.em.fork();
    const tenant = await ensureOrganizationTenant(em, org);
    await setTenantRole(em, tenant, 'u1', 'owner');
    await setTenantRole(em, tenant, 'u2', 'editor');
    await setTenantRole(em, tenant, 'gone', 'admin');

    const summary = await reconcileOrganization(orm.em.fork(), dir, 'org-b');
    expect(summary).toEqual({ organizations: 1, added: 1, updated: 1, removed: 1 });
    expect(await rowsOf('org-b')).toEqual({ u1: 'owner', u2: 'admin', u3: 'reader' });
    // Already equal: nothing to do.
    expect(await reconcileOrganization(orm.em.fork(), dir, 'org-b')).toEqual({
      organizations: 1,
      added: 0,
      updated: 0,
      removed: 0,
    });

    // Gone at the provider: its rows go, its tenant stays.
    dir.orgs.delete('org-b');
    expect((await reconcileOrganization(orm.em.fork(), dir, 'org-b')).removed).toBe(3);
    expect(await rowsOf('org-b')).toEqual({});
    // Never seen and unknown to the provider: nothing happens.
    expect((await reconcileOrganization(orm.em.fork(), dir, 'org-none')).organizations).toBe(0);
  });

  it('reconcileAll mirrors every organization with the same number of queries whatever the team sizes', async () => {
    const dir = fakeDirectory();
    const run = async (size: number) => {
      await orm.em.fork().nativeDelete(Tenant, {});
      dir.orgs.clear();
      dir.members.clear();
      for (const id of ['org-1', 'org-2', 'org-3']) {
        const roles: Record<string, Role> = { [`${id}-owner`]: 'owner' };
        for (let i = 0; i < size; i++) roles[`${id}-m${i}`] = i % 2 ? 'editor' : 'reader';
        addOrg(dir, id, roles);
      }
      // org-1 is known with stale rows; org-2 and org-3 were never seen; org-old is gone at the provider.
      const em = orm.em.fork();
      const t1 = await ensureOrganizationTenant(em, { id: 'org-1', name: 'One', slug: 'org-1' });
      for (let i = 0; i < size; i++) await setTenantRole(em, t1, `org-1-m${i}`, 'admin');
      await setTenantRole(em, t1, 'org-1-former', 'reader');
      const old = await ensureOrganizationTenant(em, { id: 'org-old', name: 'Old', slug: 'old' });
      await setTenantRole(em, old, 'someone', 'owner');

      dir.calls.listMembers = 0;
      queries.length = 0;
      const summary = await reconcileAll(orm.em.fork(), dir);
      const count = queries.length;
      expect(dir.calls.listMembers).toBe(3);
      expect(summary).toEqual({
        organizations: 4,
        added: 1 + 2 * (size + 1),
        updated: size,
        removed: 2,
      });
      for (const id of ['org-1', 'org-2', 'org-3']) {
        expect(await rowsOf(id)).toEqual(Object.fromEntries(dir.members.get(id) ?? []));
      }
      expect(await rowsOf('org-old')).toEqual({});
      return count;
    };
    const small = await run(2);
    const large = await run(40);
    expect(small).toBeGreaterThan(5);
    expect(large).toBe(small);
  });

  it('a role lowered or a membership ended at the provider cancels the invitations it could no longer give', async () => {
    const dir = fakeDirectory();
    addOrg(dir, 'org-inv', { boss: 'owner', ana: 'admin', bia: 'admin', caio: 'admin' });
    const invite = (inviterUserId: string, role: Role): DirectoryInvitation => {
      const inv: DirectoryInvitation = {
        id: `inv-${dir.invitations.length}`,
        organizationId: 'org-inv',
        email: `guest${dir.invitations.length}@example.com`,
        role,
        inviterUserId,
        createdAt: new Date(),
        expiresAt: new Date(Date.now() + 86_400_000),
        status: 'pending',
      };
      dir.invitations.push(inv);
      return inv;
    };
    await reconcileAll(orm.em.fork(), dir);
    const anaAdmin = invite('ana', 'admin');
    const anaReader = invite('ana', 'reader');
    const biaEditor = invite('bia', 'editor');
    const caioAdmin = invite('caio', 'admin');
    const bossAdmin = invite('boss', 'admin');
    // At the provider, behind the service: ana becomes an editor, bia leaves; caio and boss unchanged.
    dir.members.get('org-inv')?.set('ana', 'editor');
    dir.members.get('org-inv')?.delete('bia');
    dir.calls.listInvitations = 0;
    expect(await reconcileAll(orm.em.fork(), dir)).toMatchObject({ updated: 1, removed: 1 });
    // One listing for the organization, whatever the number of changes.
    expect(dir.calls.listInvitations).toBe(1);
    expect([anaAdmin, anaReader, biaEditor, caioAdmin, bossAdmin].map((i) => i.status)).toEqual([
      'canceled',
      'canceled',
      'canceled',
      'pending',
      'pending',
    ]);
    // reconcileOrganization applies the same rule.
    dir.members.get('org-inv')?.set('caio', 'reader');
    await reconcileOrganization(orm.em.fork(), dir, 'org-inv');
    expect(caioAdmin.status).toBe('canceled');
    expect(bossAdmin.status).toBe('pending');

    // The webhook's path: the events' roles decide, one listing per organization; an organization the
    // directory does not know has nothing to cancel.
    const bossReader = invite('boss', 'reader');
    const unknown: typeof dir = {
      ...dir,
      listInvitations: async (id) => {
        if (id !== 'org-inv') throw new AppError('NOT_FOUND', 'No such organization');
        return dir.listInvitations(id);
      },
    };
    expect(
      await cancelInvitationsForEvents(unknown, [
        { type: 'member.upserted', organizationId: 'org-inv', userId: 'boss', role: 'admin' },
        { type: 'member.upserted', organizationId: 'org-elsewhere', userId: 'x', role: 'reader' },
        { type: 'organization.deleted', organizationId: 'org-inv' },
      ]),
    ).toBe(0);
    expect([bossAdmin.status, bossReader.status]).toEqual(['pending', 'pending']);
    expect(
      await cancelInvitationsForEvents(dir, [
        { type: 'member.removed', organizationId: 'org-inv', userId: 'boss' },
      ]),
    ).toBe(2);
    expect([bossAdmin.status, bossReader.status]).toEqual(['canceled', 'canceled']);
  });

  it('reconcileAll goes on past an organization the provider fails on, then reports the failure', async () => {
    const dir = fakeDirectory();
    addOrg(dir, 'org-ok', { u1: 'owner' });
    addOrg(dir, 'org-broken', { u2: 'owner' });
    const failing: typeof dir = {
      ...dir,
      listMembers: async (id) => {
        if (id === 'org-broken') throw new AppError('BAD_GATEWAY', 'provider down');
        return dir.listMembers(id);
      },
    };
    await expect(reconcileAll(orm.em.fork(), failing)).rejects.toThrow('provider down');
    expect(await rowsOf('org-ok')).toEqual({ u1: 'owner' });
  });

  it('resolveTenant: a removed row with a still-valid token asks the provider, which says no: 403', async () => {
    const dir = fakeDirectory();
    const org = addOrg(dir, 'org-c', { u1: 'owner', u2: 'editor' });
    await reconcileOrganization(orm.em.fork(), dir, org.id);
    const claims = { userId: 'u2', email: 'u2@example.com', orgId: org.id, orgRole: 'editor' as const };
    expect((await resolveTenant(orm.em.fork(), claims, dir)).role).toBe('editor');

    // Removed at the provider; the event removes the row. The token (still valid) is refused.
    dir.members.get(org.id)?.delete('u2');
    await applyMembershipEvent(orm.em.fork(), {
      type: 'member.removed',
      organizationId: org.id,
      userId: 'u2',
    });
    const denied = await resolveTenant(orm.em.fork(), claims, dir).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(AppError);
    expect((denied as AppError).code).toBe('FORBIDDEN');
    expect(await rowsOf(org.id)).toEqual({ u1: 'owner' });

    // Removed at the provider without any event: the periodic reconcile removes the row, same outcome.
    dir.members.get(org.id)?.set('u3', 'reader');
    await reconcileOrganization(orm.em.fork(), dir, org.id);
    const reader = { ...claims, userId: 'u3', orgRole: 'reader' as const };
    expect((await resolveTenant(orm.em.fork(), reader, dir)).role).toBe('reader');
    dir.members.get(org.id)?.delete('u3');
    await reconcileAll(orm.em.fork(), dir);
    await expect(resolveTenant(orm.em.fork(), reader, dir)).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });
});
