import { randomUUID } from 'node:crypto';
import type { EntityName } from '@mikro-orm/core';
import type { MikroORM as PgliteORM } from '@mikro-orm/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AccessLogEntry,
  AccessPolicy,
  AcervoToken,
  AnchorBatch,
  AtaRequest,
  Document,
  DocumentAnchor,
  DocumentDeletion,
  DocumentTimestamp,
  Monitor,
  MonitorRun,
  NotarialAct,
  NotarialActHistory,
  NotarySignatureSession,
  OrgDeletion,
  RetentionHoldLift,
  RetentionRefusal,
  Serventia,
  ServentiaChange,
  Tenant,
  TenantMember,
  TenantStorage,
} from '../../db/entities';
import { openMemoryOrm } from '../../db/memory-orm.testing';
import { scopeToTenant, TENANT_FILTER, TENANT_OWNED } from './scope';

/** The tenant-owned entities by name, as the queries below address them. */
const ENTITY: Record<string, EntityName> = {
  Document,
  TenantMember,
  TenantStorage,
  OrgDeletion,
  AcervoToken,
  DocumentDeletion,
  AccessPolicy,
  AccessLogEntry,
  DocumentAnchor,
  DocumentTimestamp,
  NotarialAct,
  NotarialActHistory,
  Serventia,
  RetentionHoldLift,
  RetentionRefusal,
  ServentiaChange,
  AtaRequest,
  NotarySignatureSession,
  Monitor,
  MonitorRun,
};

/**
 * Entities that are shared on purpose (no tenant): the anchoring pipeline, identity plumbing, replay guards, the
 * public transparency log (its leaves carry a tenant commitment, never a tenant id), its sequencer's bound, its
 * witnesses' cosignatures, and the logs this service witnesses for other services.
 */
const NOT_TENANT_OWNED = [
  'Tenant',
  'IdentityWebhookDelivery',
  'AnchorBatch',
  'AnchorTx',
  'WalletSignatureUse',
  'LogEntry',
  'LogTile',
  'LogCheckpoint',
  'LogSequencer',
  'LogWitness',
  'LogCosignature',
  'WitnessLog',
];

describe('tenant scope by construction (PGlite)', () => {
  let orm: PgliteORM;
  /** Every tenant-owned row created, by entity name and owning tenant. */
  const rows: Record<string, Record<string, string[]>> = {};
  let tenants: [string, string];

  beforeAll(async () => {
    orm = await openMemoryOrm();
    const em = orm.em.fork();
    const batch = em.create(AnchorBatch, { id: randomUUID(), leafCount: 2, root: 'ab'.repeat(32) });
    const ids: string[] = [];
    for (const [i, kind] of (['organization', 'personal'] as const).entries()) {
      const tenant = em.create(Tenant, {
        id: randomUUID(),
        kind,
        externalId: `ext-${i}`,
        name: `Tenant ${i}`,
        serialPrefix: `T${i}`,
      });
      ids.push(tenant.id);
      const record = (entity: string, id: string) => {
        const byTenant = rows[entity] ?? {};
        byTenant[tenant.id] = [...(byTenant[tenant.id] ?? []), id];
        rows[entity] = byTenant;
      };
      for (let d = 0; d < 2; d++) {
        const doc = em.create(Document, {
          id: randomUUID(),
          tenant,
          serialNumber: `T${i}-${d}${randomUUID().slice(0, 6)}`,
          fileName: 'f.txt',
          fileSize: 1,
          mimeType: 'text/plain',
          sha256Hash: `${i}${d}`.padEnd(64, '0'),
          sourceType: 'upload',
          storageKey: `${tenant.id}/${d}`,
          consentGiven: true,
          consentTimestamp: new Date(),
          uploaderUserId: `user-${i}`,
        });
        record('Document', doc.id);
        const policy = em.create(AccessPolicy, {
          id: randomUUID(),
          document: doc,
          kind: 'public',
          permission: 'view',
          createdBy: `user-${i}`,
        });
        record('AccessPolicy', policy.id);
        const entry = em.create(AccessLogEntry, {
          id: randomUUID(),
          document: doc,
          policy,
          accessorType: 'anonymous',
          accessorIdentifier: '-',
          permission: 'view',
        });
        record('AccessLogEntry', entry.id);
        em.create(DocumentAnchor, { document: doc, batch, leafIndex: i * 2 + d, proof: [] });
        record('DocumentAnchor', doc.id);
        const stamp = em.create(DocumentTimestamp, {
          id: randomUUID(),
          document: doc,
          token: new Uint8Array([0x30, 0x00]),
          genTime: new Date(),
          serialNumber: '01',
        });
        record('DocumentTimestamp', stamp.id);
        const act = em.create(NotarialAct, {
          id: randomUUID(),
          document: doc,
          tenant,
          type: 'ata_notarial',
          recordedBy: `user-${i}`,
          recordedAt: new Date(),
          updatedAt: new Date(),
        });
        record('NotarialAct', act.id);
        const actChange = em.create(NotarialActHistory, {
          id: randomUUID(),
          document: doc,
          tenant,
          action: 'recorded',
          actorUserId: `user-${i}`,
          role: 'owner',
          at: new Date(),
        });
        record('NotarialActHistory', actChange.id);
        const session = em.create(NotarySignatureSession, {
          id: randomUUID(),
          document: doc,
          userId: `user-${i}`,
          policy: 'icp-brasil-ad-rb',
          certificates: [],
          signedAttributes: new Uint8Array([0x31, 0x00]),
          preparedPdf: new Uint8Array([0x25]),
          expiresAt: new Date(Date.now() + 600_000),
        });
        record('NotarySignatureSession', session.id);
        em.create(AtaRequest, {
          document: doc,
          name: `Requester ${i}`,
          cpf: '52998224725',
          requestedBy: `user-${i}`,
          requestedAt: new Date(),
        });
        record('AtaRequest', doc.id);
        if (d === 1) {
          const deletion = em.create(DocumentDeletion, {
            id: randomUUID(),
            document: doc,
            tenant,
            deletedBy: `user-${i}`,
            role: 'owner',
            deletedAt: new Date(),
          });
          record('DocumentDeletion', deletion.id);
        }
      }
      const member = em.create(TenantMember, {
        id: randomUUID(),
        tenant,
        userId: `user-${i}`,
        role: 'owner',
      });
      record('TenantMember', member.id);
      em.create(TenantStorage, { tenant, usedBytes: 0 });
      record('TenantStorage', tenant.id);
      const orgDeletion = em.create(OrgDeletion, { id: randomUUID(), tenant });
      record('OrgDeletion', orgDeletion.id);
      const token = em.create(AcervoToken, {
        id: randomUUID(),
        tenant,
        tokenHash: `${i}`.padEnd(64, 'f'),
        createdBy: `user-${i}`,
        createdAt: new Date(),
      });
      record('AcervoToken', token.id);
      em.create(Serventia, { tenant, cns: `10406${i}`, retentionYears: 5, declaredAt: new Date() });
      record('Serventia', tenant.id);
      const lift = em.create(RetentionHoldLift, {
        id: randomUUID(),
        tenantId: tenant.id,
        operator: 'operator',
        reason: 'test',
        liftedAt: new Date(),
      });
      record('RetentionHoldLift', lift.id);
      const refusal = em.create(RetentionRefusal, {
        id: randomUUID(),
        tenantId: tenant.id,
        action: 'lgpd_deletion',
        rule: 'retention_period',
        refusedAt: new Date(),
      });
      record('RetentionRefusal', refusal.id);
      const change = em.create(ServentiaChange, {
        id: randomUUID(),
        tenantId: tenant.id,
        action: 'retention',
        cns: `10406${i}`,
        operator: 'operator',
        reason: 'test',
        changedAt: new Date(),
      });
      record('ServentiaChange', change.id);
      const now = new Date();
      const monitor = em.create(Monitor, {
        id: randomUUID(),
        tenant,
        createdBy: `user-${i}`,
        url: 'https://example.org/',
        interval: 'PT1H',
        period: 'P1D',
        intervalSeconds: 3600,
        periodSeconds: 86_400,
        plannedRuns: 24,
        state: 'active',
        consentAt: now,
        createdAt: now,
        startsAt: now,
        endsAt: new Date(now.getTime() + 86_400_000),
      });
      record('Monitor', monitor.id);
      const run = em.create(MonitorRun, {
        id: randomUUID(),
        monitor,
        run: 1,
        dueAt: now,
        observedAt: now,
        outcome: 'seen',
      });
      record('MonitorRun', run.id);
    }
    await em.flush();
    tenants = [ids[0] ?? '', ids[1] ?? ''];
  }, 180_000);

  afterAll(async () => {
    await orm?.close(true);
  });

  it('lists every entity with a tenant, directly or through its document', () => {
    const owned = Object.keys(TENANT_OWNED).sort();
    const inSchema = [...orm.getMetadata().getAll().values()]
      .filter((meta) => !meta.embeddable && !meta.virtual)
      .map((meta) => meta.className);
    const withTenant = inSchema.filter((name) => !NOT_TENANT_OWNED.includes(name)).sort();
    // A new entity must be declared tenant-owned (with its condition) or shared on purpose above.
    expect(withTenant).toEqual(owned);
    expect(Object.keys(rows).sort()).toEqual(owned);
  });

  it('a query through the request scope never returns another tenant’s row, whatever it asks', async () => {
    for (const [mine, theirs] of [tenants, [...tenants].reverse()] as [string, string][]) {
      for (const name of Object.keys(TENANT_OWNED)) {
        const entity = ENTITY[name] as EntityName;
        const em = scopeToTenant(orm.em.fork(), mine);
        const pk =
          name === 'DocumentAnchor' || name === 'AtaRequest'
            ? 'document'
            : name === 'TenantStorage' || name === 'Serventia'
              ? 'tenant'
              : 'id';
        const all = await em.find(entity, {});
        const ids = all.map((row) => {
          const value = (row as Record<string, unknown>)[pk];
          return typeof value === 'string' ? value : String((value as { id: string }).id);
        });
        expect(ids.sort(), name).toEqual([...(rows[name]?.[mine] ?? [])].sort());
        // Asking for the other tenant's rows by id finds nothing, and counts say so too.
        const foreign = rows[name]?.[theirs] ?? [];
        expect(await em.find(entity, { [pk]: { $in: foreign } }), name).toEqual([]);
        expect(await em.count(entity, { [pk]: { $in: foreign } }), name).toBe(0);
        // Inside a transaction (a fork of the scoped manager) the scope holds.
        await em.transactional(async (tx) => {
          expect(await tx.count(entity, { [pk]: { $in: foreign } }), name).toBe(0);
        });
      }
    }
  });

  it('updates and deletes through the scope cannot touch another tenant’s rows', async () => {
    const [mine, theirs] = tenants;
    const em = scopeToTenant(orm.em.fork(), mine);
    const foreignDocs = rows.Document?.[theirs] ?? [];
    expect(await em.nativeUpdate(Document, { id: { $in: foreignDocs } }, { published: true })).toBe(0);
    expect(await em.nativeDelete(AccessLogEntry, { document: { $in: foreignDocs } })).toBe(0);
    const unscoped = orm.em.fork();
    expect(await unscoped.count(Document, { id: { $in: foreignDocs }, published: true })).toBe(0);
    expect(await unscoped.count(AccessLogEntry, { document: { $in: foreignDocs } })).toBe(foreignDocs.length);
  });

  it('an explicit opt-out sees every tenant (telling 403 from 404), the unscoped manager too', async () => {
    const [mine, theirs] = tenants;
    const em = scopeToTenant(orm.em.fork(), mine);
    const foreign = rows.Document?.[theirs]?.[0] ?? '';
    expect(await em.findOne(Document, { id: foreign })).toBeNull();
    expect(
      await em.findOne(Document, { id: foreign }, { filters: { [TENANT_FILTER]: false } }),
    ).not.toBeNull();
    expect(await orm.em.fork().count(Document, {})).toBe(4);
  });
});
