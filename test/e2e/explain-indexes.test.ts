import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MikroORM } from '@mikro-orm/postgresql';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { FsObjectStorage } from '@notary/server/adapters/storage/fs';
import { Tenant } from '@notary/server/db/entities';
import { baseOrmOptions } from '@notary/server/db/orm-config';
import { AcervoFeedCache } from '@notary/server/domain/acervo/cache';
import { MARK_STRIDE, readAcervoFeed } from '@notary/server/domain/acervo/feed';
import { listDocumentsPage } from '@notary/server/domain/documents/list';
import { buildReceipt } from '@notary/server/domain/documents/receipt';
import { findBySerial, findDocumentInTenant, verifyByHash } from '@notary/server/domain/documents/service';
import { heldAmong, tenantHold } from '@notary/server/domain/retention/hold';
import type { Actor } from '@notary/server/domain/tenancy/actor';
import { scopeToTenant } from '@notary/server/domain/tenancy/scope';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../harness/postgres';

/**
 * The documents list, its search, public verification, the acervo feed and the receipt lookup stay on indexes
 * at 100,000 documents in one tenant (Migration20261126170100; docs/api.md, Documents list and Acervo feed):
 * the SQL each domain function sends (captured from MikroORM, parameters inlined as MikroORM sends them) is
 * EXPLAINed on PostgreSQL after VACUUM ANALYZE (what autovacuum keeps in production: statistics and the
 * visibility map an index-only count relies on), and no plan reads the document table sequentially. Plans,
 * not timings: the figures belong to `npm run bench`.
 */

const TENANT = '00000000-0000-4000-8000-0000000000a1';
const OTHER = '00000000-0000-4000-8000-0000000000b2';
const ROWS = 100_000;
const ACERVO_TOKEN = `acv_${'x'.repeat(43)}`;

/** The n-th generated document's values, as the insert below computes them. */
const serialOf = (i: number) =>
  `ACME-${createHash('md5').update(String(i)).digest('hex').slice(0, 10).toUpperCase()}`;
const hashOf = (i: number) => createHash('sha256').update(String(i)).digest('hex');

describe('query plans at 100k documents (PostgreSQL)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let orm: MikroORM;
  let storageDir: string;
  let storage: FsObjectStorage;
  let actor: Actor;
  /** Every statement MikroORM sent since the last `capture` began, as sent. */
  let sent: string[] = [];

  /** The statements `run` sends through MikroORM. */
  async function capture(run: () => Promise<unknown>): Promise<string[]> {
    sent = [];
    await run();
    return sent;
  }

  /** PostgreSQL's plan of `sql`, one line per node. */
  async function plan(sql: string): Promise<string> {
    const rows = await orm.em.getConnection().execute<{ 'QUERY PLAN': string }[]>(`explain ${sql}`);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  }

  /** Plans of the statements on `document` that `run` sends; fails on a sequential scan of it. */
  async function expectIndexed(run: () => Promise<unknown>): Promise<string[]> {
    const statements = (await capture(run)).filter((s) => /\bfrom "?document"?\b/i.test(s));
    expect(statements.length).toBeGreaterThan(0);
    const plans: string[] = [];
    for (const sql of statements) {
      const p = await plan(sql);
      expect(p, `${sql}\n${p}`).not.toMatch(/Seq Scan on document\b/);
      plans.push(p);
      // SHOW_PLANS=1 prints each statement and its plan (reading them when an index changes).
      if (process.env.SHOW_PLANS) console.log(`${sql}\n${p}\n`);
    }
    return plans;
  }

  const scoped = () => scopeToTenant(orm.em.fork(), TENANT);

  beforeAll(async () => {
    db = await createTestDatabase();
    orm = await MikroORM.init({
      ...baseOrmOptions,
      clientUrl: db.url,
      onQuery: (sql, params) => {
        sent.push(orm.em.getPlatform().formatQuery(sql, params));
        return sql;
      },
    });
    await orm.migrator.up();
    const em = orm.em.fork() as SqlEntityManager;
    await em.execute(
      `insert into tenant (id, kind, external_id, name, serial_prefix, serial_prefix_key, created_at)
       values ('${TENANT}', 'organization', 'org_a', 'Cartório A', 'ACME', 'ACME', now()),
              ('${OTHER}', 'organization', 'org_b', 'Cartório B', 'BETA', 'BETA', now())`,
    );
    // 100k documents in one tenant and 10k in another: one in 50 an IPFS import, one in 100 a web capture,
    // one in 5 published, one in 997 LGPD-deleted; creation one second apart with microseconds.
    await em.execute(
      `insert into document (id, tenant_id, serial_number, file_name, file_size, mime_type, sha256_hash,
                             source_type, source_uri, screenshot_key, consent_given, consent_timestamp,
                             uploader_user_id, created_at, published, published_at, deleted_at)
       select gen_random_uuid(),
              case when i > ${ROWS} then '${OTHER}'::uuid else '${TENANT}'::uuid end,
              case when i > ${ROWS} then 'BETA-' else 'ACME-' end || upper(substr(md5(i::text), 1, 10)),
              'escritura-' || i || '.pdf', 1000 + i, 'application/pdf', encode(sha256(i::text::bytea), 'hex'),
              case when i % 50 = 0 then 'ipfs' when i % 100 = 1 then 'web-capture' else 'upload' end,
              case when i % 50 = 0 then 'ipfs://bafy' || md5(i::text) end,
              case when i % 100 = 1 then 'captures/' || i || '.png' end,
              true, now(), 'user', timestamptz '2026-01-01' + i * interval '1.000123 second', i % 5 = 0,
              case when i % 5 = 0 then timestamptz '2026-02-01' + i * interval '1.000456 second' end,
              case when i % 997 = 0 then now() end
         from generate_series(1, ${ROWS + 10_000}) i`,
    );
    // One document in 10 has a notarial act, its MNE and selo numbered by creation order.
    await em.execute(
      `insert into notarial_act (id, document_id, tenant_id, type, mne, selo_state, selo_code, recorded_by,
                                 recorded_at, updated_at)
       select gen_random_uuid(), d.id, d.tenant_id, 'ata_notarial',
              '104067.2026.01.01.' || lpad(d.n::text, 8, '0') || '-00', 'SP', 'SELO-' || d.n, 'user', now(), now()
         from (select id, tenant_id, row_number() over (order by created_at) n from document) d
        where d.n % 10 = 0`,
    );
    await em.execute(
      `insert into acervo_token (id, tenant_id, token_hash, created_by, created_at)
       values (gen_random_uuid(), '${TENANT}', '${createHash('sha256').update(ACERVO_TOKEN).digest('hex')}', 'user', now())`,
    );
    await em.execute('vacuum analyze');
    const tenant = await orm.em.fork().findOneOrFail(Tenant, { id: TENANT });
    actor = { userId: 'user', email: null, tenant, role: 'owner', ip: null };
    storageDir = await mkdtemp(path.join(os.tmpdir(), 'explain-'));
    storage = new FsObjectStorage({ root: storageDir, secret: 'x', publicBaseUrl: () => 'http://127.0.0.1' });
  }, 120_000);

  afterAll(async () => {
    await orm?.close();
    await db?.drop();
    if (storageDir) await rm(storageDir, { recursive: true, force: true });
  });

  it('documents list: first page and a deep page through the cursor read the (tenant, created_at, id) index', async () => {
    let first = {
      documents: [] as { id: string; screenshot: string | null }[],
      nextCursor: null as string | null,
    };
    const [firstPlan] = await expectIndexed(async () => {
      first = await listDocumentsPage(scoped(), storage, actor);
    });
    expect(first.documents).toHaveLength(100);
    expect(first.documents.filter((d) => d.screenshot !== null)).toHaveLength(1);
    expect(firstPlan).toMatch(/Index Scan Backward using document_tenant_id_created_at_id_index/);
    // A deep page: walk there with the cursors, then check its plan.
    let cursor = first.nextCursor as string;
    const seen = new Set(first.documents.map((d) => d.id));
    for (let i = 0; i < 5; i++) {
      const page = await listDocumentsPage(scoped(), storage, actor, { cursor, limit: 100 });
      for (const d of page.documents) seen.add(d.id);
      cursor = page.nextCursor as string;
    }
    expect(seen.size).toBe(600);
    const [deepPlan] = await expectIndexed(() => listDocumentsPage(scoped(), storage, actor, { cursor }));
    expect(deepPlan).toMatch(/Index Cond: .*ROW\(created_at, id\) < ROW/);
  });

  it('documents search: serial, hash prefix, CID prefix and file name each through their index', async () => {
    const cases: [string, RegExp][] = [
      [serialOf(4242).toLowerCase(), /document_serial_number_pattern_index/],
      [serialOf(4242).slice(0, 8), /document_serial_number_pattern_index/],
      [hashOf(4242).slice(0, 12), /document_sha256_hash_pattern_index/],
      [
        `bafy${createHash('md5').update('4250').digest('hex').slice(0, 10)}`,
        /document_ipfs_source_uri_index/,
      ],
      ['critura-4242.', /document_file_name_trgm_index/],
      ['104067.2026.01.01.0000424', /notarial_act_mne_pattern_index/],
      ['104067202601010000424', /notarial_act_mne_pattern_index/],
      ['selo-4240', /notarial_act_selo_code_pattern_index/],
    ];
    for (const [q, index] of cases) {
      let found: { serialNumber: string }[] = [];
      const [p] = await expectIndexed(async () => {
        found = (await listDocumentsPage(scoped(), storage, actor, { q })).documents;
      });
      expect(p, q).toMatch(index);
      expect(found.length, q).toBeGreaterThan(0);
    }
    const byHash = await listDocumentsPage(scoped(), storage, actor, { q: hashOf(4242).slice(0, 12) });
    expect(byHash.documents.map((d) => d.serialNumber)).toEqual([serialOf(4242)]);
  });

  it('public verify by hash and by serial, and the receipt lookup, by index', async () => {
    const [byHash] = await expectIndexed(async () =>
      expect(await verifyByHash(orm.em.fork(), hashOf(777))).toMatchObject({ found: true }),
    );
    expect(byHash).toMatch(/document_sha256_hash_pattern_index/);
    await expectIndexed(async () =>
      expect(await findBySerial(orm.em.fork(), serialOf(777))).toMatchObject({ serialNumber: serialOf(777) }),
    );
    const id = (await listDocumentsPage(scoped(), storage, actor, { limit: 1 })).documents[0]?.id as string;
    await expectIndexed(async () => {
      const em = scoped();
      const doc = await findDocumentInTenant(em, actor, id);
      await buildReceipt(
        em,
        { config: { anchoring: { mode: 'off' }, serviceName: 'Notary' }, publicUrl: 'http://x' },
        doc,
      );
    });
  });

  it("retention: the organization deletion's held count and a batch's re-check stay on indexes", async () => {
    const em = orm.em.fork() as SqlEntityManager;
    // A year after the last 1.8 hours of the tenant's documents: about 6,500 inside a 1-year retention.
    const now = new Date('2027-01-02T02:00:00Z');
    /**
     * Plans of the statements `run` sends that read documents or acts; none scans the document table
     * sequentially (the act table may be: here 9 acts in 10 are this tenant's, and reading them all is the
     * cheapest way to count them).
     */
    const indexedHolds = async (run: () => Promise<unknown>): Promise<string> => {
      const statements = (await capture(run)).filter((q) => /\b(document|notarial_act)\b/.test(q));
      expect(statements.length).toBeGreaterThan(0);
      const plans: string[] = [];
      for (const q of statements) {
        const p = await plan(q);
        expect(p, `${q}\n${p}`).not.toMatch(/Seq Scan on document\b/);
        plans.push(p);
        if (process.env.SHOW_PLANS) console.log(`${q}\n${p}\n`);
      }
      return plans.join('\n');
    };
    // Without a serventia only the acts hold (1 document in 10 of the tenant, minus the LGPD-deleted).
    const actsOnly = await indexedHolds(async () => {
      expect(await tenantHold(orm.em.fork(), TENANT, now)).toMatchObject({ rule: 'notarial_act' });
    });
    expect(actsOnly).toMatch(/notarial_act/);
    await em.execute(
      `insert into serventia (tenant_id, cns, retention_years, declared_at) values ('${TENANT}', '104067', 1, now())`,
    );
    try {
      const withRetention = await indexedHolds(async () => {
        expect((await tenantHold(orm.em.fork(), TENANT, now))?.held).toBeGreaterThan(0);
      });
      expect(withRetention).toMatch(/document_tenant_id_created_at_id_index/);
      const ids = (
        await em.execute<{ id: string }[]>(
          `select id from document where tenant_id = '${TENANT}' order by id limit 200`,
        )
      ).map((r) => r.id);
      await indexedHolds(() => heldAmong(orm.em.fork(), TENANT, ids, now));
    } finally {
      await em.execute(`delete from serventia where tenant_id = '${TENANT}'`);
    }
  });

  it('acervo feed: the first and a deep page cost the same index entries, and the deep page is right', async () => {
    const cache = new AcervoFeedCache();
    const [firstCount, firstPage] = await expectIndexed(() =>
      readAcervoFeed(orm.em.fork(), cache, ACERVO_TOKEN, { limit: 60, offset: 0 }),
    );
    expect(firstCount).toMatch(/Index Only Scan using document_acervo_index/);
    expect(firstPage).toMatch(/document_acervo_index/);
    const offset = 15 * MARK_STRIDE + 123;
    let deep = { documents: [] as { serialNumber: string }[], total: 0 };
    const deepPlans = await expectIndexed(async () => {
      deep = await readAcervoFeed(orm.em.fork(), cache, ACERVO_TOKEN, { limit: 60, offset });
    });
    // The marks (once per state of the feed) and the page, which seeks to the mark: a row comparison in the
    // index condition and fewer than MARK_STRIDE entries skipped.
    expect(deepPlans.join('\n')).toMatch(/Index Cond: .*ROW\(published_at, created_at, id\) < ROW/);
    const expected = await (orm.em.fork() as SqlEntityManager).execute<{ serial_number: string }[]>(
      `select serial_number from document where tenant_id = '${TENANT}' and published and deleted_at is null
        order by published_at desc, created_at desc, id desc limit 60 offset ${offset}`,
    );
    expect(deep.documents.map((d) => d.serialNumber)).toEqual(expected.map((r) => r.serial_number));
    expect(deep.total).toBe(
      first(
        await (orm.em.fork() as SqlEntityManager).execute<{ n: number }[]>(
          `select count(*)::int as n from document where tenant_id = '${TENANT}' and published and deleted_at is null`,
        ),
      ).n,
    );
  });
});

function first<T>(rows: T[]): T {
  const row = rows[0];
  if (row === undefined) throw new Error('no row');
  return row;
}
