import { randomUUID } from 'node:crypto';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { organizationSerialPrefix, serialPrefixKey } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../../test/harness/postgres';
import { type Database, openDatabase } from '../../db';
import { Tenant } from '../../db/entities';
import {
  ensureOrganizationTenant,
  ensurePersonalTenant,
  organizationSerialPrefixCandidates,
  personalSerialPrefix,
  personalSerialPrefixCandidates,
} from './resolve';

/**
 * Serial prefixes are unique up to confusables and organizations cannot take reserved ones, on both database
 * kinds: the migration that adds the key on data that already holds duplicates, then tenant creation trying
 * to take a prefix another tenant reads as (same slug prefix, O/0 and I/L/1 spellings, reserved forms,
 * concurrent creations, a personal prefix collision).
 */

/** The migration before the one adding `tenant.serial_prefix_key`. */
const BEFORE_KEY = 'Migration20261125095459';

type Kind = 'pglite' | 'postgresql';

describe.each<Kind>(['pglite', 'postgresql'])('serial prefixes on %s', (kind) => {
  let db: Database;
  let drop: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    if (kind === 'pglite') {
      db = await openDatabase({ databaseUrl: undefined, dataDir: '', memory: true, migrate: false });
    } else {
      const pg = await createTestDatabase();
      drop = pg.drop;
      db = await openDatabase({ databaseUrl: pg.url, dataDir: '', migrate: false });
    }
    await db.orm.migrator.up({ to: BEFORE_KEY });
  }, 120_000);

  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  /** A tenant row as the service wrote them before the key existed (raw SQL: the entity now has the key). */
  async function legacyTenant(prefix: string, createdAt: Date): Promise<string> {
    const id = randomUUID();
    await db
      .fork()
      .execute(
        'insert into tenant (id, kind, external_id, name, serial_prefix, created_at) values (?, ?, ?, ?, ?, ?)',
        [id, 'organization', `legacy-${id}`, `Legacy ${prefix}`, prefix, createdAt],
      );
    return id;
  }

  const keyOf = async (id: string) =>
    (await db.fork().findOneOrFail(Tenant, { id }, { fields: ['serialPrefixKey'] })).serialPrefixKey;

  it('the migration keeps every existing prefix; the oldest of prefixes that read alike holds the key', async () => {
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    const acmeOld = await legacyTenant('ACME', new Date(t0));
    const acmeNew = await legacyTenant('ACME', new Date(t0 + 1000));
    const limaOld = await legacyTenant('L1MA', new Date(t0 + 2000));
    const limaNew = await legacyTenant('LIMA', new Date(t0 + 3000));
    const bob = await legacyTenant('BOB', new Date(t0 + 4000));
    await db.orm.migrator.up();

    const prefixes = await db.fork().find(Tenant, {}, { orderBy: { createdAt: 'asc' } });
    expect(prefixes.map((t) => [t.serialPrefix, t.serialPrefixKey])).toEqual([
      ['ACME', 'ACME'],
      ['ACME', null],
      ['L1MA', '11MA'],
      ['LIMA', null],
      ['BOB', 'B0B'],
    ]);
    expect([await keyOf(acmeOld), await keyOf(acmeNew), await keyOf(limaOld), await keyOf(limaNew)]).toEqual([
      'ACME',
      null,
      '11MA',
      null,
    ]);
    expect(await keyOf(bob)).toBe('B0B');
    // The constraint holds from now on, whatever code writes the row.
    const sql = db.fork() as SqlEntityManager;
    await expect(
      sql.execute(
        `insert into tenant (id, kind, external_id, name, serial_prefix, serial_prefix_key, created_at)
         values (?, 'organization', ?, 'Twin', 'B0B', 'B0B', now())`,
        [randomUUID(), `twin-${randomUUID()}`],
      ),
    ).rejects.toThrow(/unique|duplicate/i);
  });

  const org = (slug: string) => ({ id: randomUUID(), name: `Org ${slug}`, slug });

  it('an organization whose slug gives a prefix another tenant reads as gets a longer one of its own', async () => {
    // Held by the legacy rows above: ACME (its twin has no key), L1MA (LIMA reads the same: 11MA), BOB.
    for (const slug of ['a-c-m-e', 'acme', 'lima', 'l1ma', 'b0b', 'bob']) {
      const created = await ensureOrganizationTenant(db.fork(), org(slug));
      const own = organizationSerialPrefix(slug);
      expect(created.serialPrefix, slug).not.toBe(own);
      expect(created.serialPrefix.startsWith(own), slug).toBe(true);
      expect(created.serialPrefix).toHaveLength(10);
      expect(created.serialPrefixKey).toBe(serialPrefixKey(created.serialPrefix));
    }
    // A free one is its slug's own.
    expect((await ensureOrganizationTenant(db.fork(), org('cartorio-novo'))).serialPrefix).toBe('CARTORIO');
    // Every key is unique; an existing tenant keeps its prefix.
    const all = await db.fork().find(Tenant, { serialPrefixKey: { $ne: null } });
    expect(new Set(all.map((t) => t.serialPrefixKey)).size).toBe(all.length);
  });

  it('reserved prefixes (personal form, the service, official words) are never given to an organization', async () => {
    for (const slug of ['uabcde', 'u0d4t3s', 'notary', 'notary-br', 'n0tary', 'admin', 'verify', 'sistema']) {
      const created = await ensureOrganizationTenant(db.fork(), org(slug));
      expect(created.serialPrefix, slug).not.toBe(organizationSerialPrefix(slug));
      expect(created.serialPrefix, slug).not.toMatch(/^U[0-9A-HJKMNP-TV-Z]{5,11}$/);
      expect(serialPrefixKey(created.serialPrefix), slug).not.toMatch(/^N0TARY/);
    }
    const candidates = organizationSerialPrefixCandidates(org('notary'));
    expect(candidates.every((c) => /^T[0-9A-HJKMNP-TV-Z]{9}$/.test(c))).toBe(true);
  });

  it('concurrent creations: one tenant per organization, distinct prefixes for organizations that collide', async () => {
    const same = org('duplo');
    const twins = [org('du-plo'), org('d-u-p-l-o')];
    const created = await Promise.all([
      ensureOrganizationTenant(db.fork(), same),
      ensureOrganizationTenant(db.fork(), same),
      ...twins.map((o) => ensureOrganizationTenant(db.fork(), o)),
    ]);
    expect(created[0]?.id).toBe(created[1]?.id);
    expect(await db.fork().count(Tenant, { externalId: same.id })).toBe(1);
    const keys = [created[0], created[2], created[3]].map((t) => t?.serialPrefixKey);
    expect(new Set(keys).size).toBe(3);
    expect(keys.filter((k) => k === 'DUP10')).toHaveLength(1);
  });

  it('a personal prefix already held: the workspace gets the next, one character longer', async () => {
    const userId = `user-${randomUUID()}`;
    const [first, second] = personalSerialPrefixCandidates(userId);
    expect(first).toBe(personalSerialPrefix(userId));
    // Another workspace holds the 5-character prefix (25 bits: collisions come with a few thousand users).
    await db.fork().execute(
      `insert into tenant (id, kind, external_id, name, serial_prefix, serial_prefix_key, created_at)
         values (?, 'personal', ?, 'Someone', ?, ?, now())`,
      [randomUUID(), `other-${randomUUID()}`, first, serialPrefixKey(first as string)],
    );
    const created = await ensurePersonalTenant(db.fork(), userId, 'ana@example.com');
    expect(created.serialPrefix).toBe(second);
    expect(await ensurePersonalTenant(db.fork(), userId, 'ana@example.com')).toMatchObject({
      id: created.id,
    });
  });
});
