import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/pglite';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMemoryOrm } from '../../db/memory-orm.testing';
import { addUtcYears, destructionHold, heldAmong, tenantHold } from './hold';
import { liftRetentionHold } from './lift';

/**
 * The retention rule on a real schema (PGlite, every migration): a notarial act holds; a serventia's retention
 * holds documents younger than its years (injected clock), or all when permanent; the operator's lift (one
 * document, a whole tenant) releases; another tenant's lift or serventia changes nothing.
 */

const DAY = 24 * 60 * 60 * 1000;
const NOW = new Date('2031-06-15T12:00:00.000Z');

describe('retention holds', () => {
  let orm: MikroORM;
  const sql = () => orm.em.fork() as SqlEntityManager;

  async function tenant(): Promise<string> {
    const id = randomUUID();
    await sql().execute(
      `insert into tenant (id, kind, external_id, name, serial_prefix, created_at)
       values (?, 'organization', ?, 'Cartório', 'CART', now())`,
      [id, randomUUID()],
    );
    return id;
  }

  async function document(tenantId: string, createdAt: Date, deleted = false) {
    const id = randomUUID();
    await sql().execute(
      `insert into document (id, tenant_id, serial_number, file_name, file_size, mime_type, sha256_hash,
                             source_type, storage_key, consent_given, consent_timestamp, uploader_user_id,
                             created_at, deleted_at)
       values (?, ?, ?, 'a.pdf', 5, 'application/pdf', repeat('a', 64), 'upload', ?, true, now(), 'u1', ?, ?)`,
      [
        id,
        tenantId,
        `CART-${randomUUID().slice(0, 8)}`,
        `${tenantId}/${id}`,
        createdAt,
        deleted ? NOW : null,
      ],
    );
    return { id, tenant: { id: tenantId }, createdAt, deletedAt: deleted ? NOW : null };
  }

  async function act(doc: { id: string; tenant: { id: string } }): Promise<void> {
    await sql().execute(
      `insert into notarial_act (id, document_id, tenant_id, type, recorded_by, recorded_at, updated_at)
       values (?, ?, ?, 'ata_notarial', 'u1', now(), now())`,
      [randomUUID(), doc.id, doc.tenant.id],
    );
  }

  async function serventia(tenantId: string, years: number | null): Promise<void> {
    await sql().execute(
      `insert into serventia (tenant_id, cns, retention_years, declared_at) values (?, '123456', ?, now())`,
      [tenantId, years],
    );
  }

  beforeAll(async () => {
    orm = await openMemoryOrm();
  });
  afterAll(async () => {
    await orm?.close();
  });

  it('a document without an act in a tenant without a serventia is not held', async () => {
    const t = await tenant();
    const doc = await document(t, new Date(NOW.getTime() - DAY));
    expect(await destructionHold(sql(), doc, NOW)).toBeNull();
    expect(await tenantHold(sql(), t, NOW)).toBeNull();
  });

  it('5 years of retention: 5 years and 1 day old is deletable, 1 day younger than 5 years is held', async () => {
    const t = await tenant();
    await serventia(t, 5);
    const old = await document(t, new Date(addUtcYears(NOW, -5).getTime() - DAY));
    const young = await document(t, new Date(addUtcYears(NOW, -5).getTime() + DAY));
    // The retention ends at the same instant 5 calendar years later: from then on the document may go.
    const boundary = await document(t, addUtcYears(NOW, -5));
    expect(await destructionHold(sql(), old, NOW)).toBeNull();
    expect(await destructionHold(sql(), boundary, NOW)).toBeNull();
    const hold = await destructionHold(sql(), young, NOW);
    expect(hold).toMatchObject({
      rule: 'retention_period',
      until: addUtcYears(young.createdAt, 5),
      cns: '123456',
      legalBasis: 'LGPD art. 16 I',
    });
    expect(hold?.message).toMatch(/LGPD art\. 16 I/);
    // The same document two days later is free: the clock decides, nothing else.
    expect(await destructionHold(sql(), young, new Date(NOW.getTime() + 2 * DAY))).toBeNull();
    expect(await tenantHold(sql(), t, NOW)).toMatchObject({ rule: 'retention_period', held: 1 });
    expect(await heldAmong(sql(), t, [old.id, young.id, boundary.id], NOW)).toEqual([
      { id: young.id, rule: 'retention_period' },
    ]);
  });

  it('permanent retention holds every live document, whatever its age; an LGPD-deleted one is not held', async () => {
    const t = await tenant();
    await serventia(t, null);
    const ancient = await document(t, new Date('1990-01-01T00:00:00Z'));
    const gone = await document(t, new Date('1990-01-01T00:00:00Z'), true);
    expect(await destructionHold(sql(), ancient, NOW)).toMatchObject({
      rule: 'retention_period',
      until: 'permanent',
    });
    expect(await destructionHold(sql(), gone, NOW)).toBeNull();
    expect(await tenantHold(sql(), t, NOW)).toMatchObject({ held: 1 });
  });

  it('a notarial act holds, with or without a serventia, and leads the tenant hold', async () => {
    const t = await tenant();
    const doc = await document(t, new Date('2000-01-01T00:00:00Z'));
    const plain = await document(t, new Date('2000-01-01T00:00:00Z'));
    await act(doc);
    expect(await destructionHold(sql(), doc, NOW)).toMatchObject({ rule: 'notarial_act' });
    expect(await destructionHold(sql(), plain, NOW)).toBeNull();
    expect(await tenantHold(sql(), t, NOW)).toMatchObject({ rule: 'notarial_act', held: 1 });
    // Under a permanent serventia both are held; the act still leads.
    await serventia(t, null);
    expect(await tenantHold(sql(), t, NOW)).toMatchObject({ rule: 'notarial_act', held: 2, cns: '123456' });
    expect(await heldAmong(sql(), t, [doc.id, plain.id], NOW)).toHaveLength(2);
  });

  it("the operator's lift releases one document, or the whole tenant; another tenant's lift changes nothing", async () => {
    const t = await tenant();
    const other = await tenant();
    await serventia(t, null);
    const a = await document(t, NOW);
    const b = await document(t, NOW);
    await act(a);
    const lifted = await liftRetentionHold(sql(), { document: a.id }, 'ops', 'court order 123', NOW);
    expect(lifted).toMatch(new RegExp(`^lifted document ${a.id} CART-`));
    expect(await destructionHold(sql(), a, NOW)).toBeNull();
    expect(await destructionHold(sql(), b, NOW)).toMatchObject({ rule: 'retention_period' });
    await liftRetentionHold(sql(), { tenantId: other }, 'ops', 'another organization', NOW);
    expect(await tenantHold(sql(), t, NOW)).toMatchObject({ held: 1 });
    await liftRetentionHold(sql(), { tenantId: t }, 'ops', 'organization closed by the CGJ', NOW);
    expect(await destructionHold(sql(), b, NOW)).toBeNull();
    expect(await tenantHold(sql(), t, NOW)).toBeNull();
    const rows: { operator: string; reason: string; document_id: string | null }[] = await sql().execute(
      'select operator, reason, document_id from retention_hold_lift where tenant_id = ? order by lifted_at, document_id nulls last',
      [t],
    );
    expect(rows).toHaveLength(2);
    expect(rows.map((r) => r.reason).sort()).toEqual(['court order 123', 'organization closed by the CGJ']);
  });

  it('a lift without a reason, or of an unknown document, is refused', async () => {
    await expect(liftRetentionHold(sql(), { document: randomUUID() }, 'ops', 'x', NOW)).rejects.toMatchObject(
      {
        code: 'NOT_FOUND',
      },
    );
    await expect(liftRetentionHold(sql(), { document: 'CART-XXXX' }, 'ops', '  ', NOW)).rejects.toMatchObject(
      {
        code: 'BAD_REQUEST',
      },
    );
    await expect(liftRetentionHold(sql(), { tenantId: randomUUID() }, '', 'why', NOW)).rejects.toMatchObject({
      code: 'BAD_REQUEST',
    });
  });
});
