import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { AppError } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestPglite } from '../../../../test/harness/db-templates';
import { createTestDatabase } from '../../../../test/harness/postgres';
import { FsObjectStorage } from '../../adapters/storage/fs';
import { type Database, openDatabase } from '../../db';
import { Tenant, type TenantEntity } from '../../db/entities';
import type { AnchoringQueue } from '../../ports/anchoring-queue';
import { AcervoFeedCache } from '../acervo/cache';
import type { Actor } from '../tenancy/actor';
import { deleteDocumentUnderLgpd } from './lgpd-deletion';
import { type IntakeSource, type NotarizeDeps, notarize } from './notarize';
import { countStoredBytes, deleteDocumentRows, recountStorage, storageUsedBytes } from './quota';
import { PublicVerifyCache } from './verify-cache';

/**
 * The storage quota's used-bytes counter (`tenant_storage`) against the sum it stands for, on PGlite and
 * PostgreSQL, through the real intake and deletion paths with local object storage: concurrent uploads and
 * LGPD deletions in one tenant, failures inside their transactions, what costs nothing (IPFS imports, a
 * capture's screenshot), an organization deletion's batches, the repair, and the migration's backfill.
 */

type Kind = 'pglite' | 'postgresql';

/** An intake delivering `bytes` with consent, after `before` (what happens while the client sends). */
function intake(bytes: Buffer, before?: () => Promise<unknown>): IntakeSource {
  return {
    announce: () => undefined,
    read: async (onFile) => {
      await before?.();
      const stream = Readable.from([bytes], { objectMode: false });
      const ended = new Promise((resolve) => stream.once('end', resolve));
      onFile({ stream, fileName: 'note.txt', declaredType: 'text/plain' });
      await ended;
      return { consentAt: new Date() };
    },
  };
}

/** Opens a fresh, fully migrated (unless `migrate` is false) database of `kind`; `drop` removes it. */
async function freshDatabase(
  kind: Kind,
  migrate = true,
): Promise<{ db: Database; drop: () => Promise<void> }> {
  if (kind === 'pglite') {
    if (migrate) return { db: await openTestPglite(), drop: async () => {} };
    const db = await openDatabase({ databaseUrl: undefined, dataDir: '', memory: true, migrate });
    return { db, drop: async () => {} };
  }
  const pg = await createTestDatabase();
  const db = await openDatabase({ databaseUrl: pg.url, dataDir: '', migrate });
  return { db, drop: pg.drop };
}

/** What an error is, in a line: an AppError's code, else its message. */
const outcome = (e: unknown) => (e instanceof AppError ? e.code : String(e));

describe.each<Kind>(['pglite', 'postgresql'])('storage counter on %s', (kind) => {
  let db: Database;
  let drop: () => Promise<void>;
  let dir: string;
  let storage: FsObjectStorage;
  const anchoringQueue: AnchoringQueue = { enqueueAnchoring: async () => {} };
  const deps = (quotaBytes: number, overrides: Partial<NotarizeDeps> = {}): NotarizeDeps => ({
    storage,
    anchoringQueue,
    config: { tenantStorageQuotaBytes: quotaBytes, diskFreeFloorBytes: 0 },
    freeSpace: { freeBytes: async () => Number.POSITIVE_INFINITY },
    ...overrides,
  });
  const lgpdPorts = () => ({
    storage,
    acervoCache: new AcervoFeedCache(),
    verifyCache: new PublicVerifyCache(),
  });

  /** A fresh tenant and its owner. */
  async function newTenant(): Promise<Actor> {
    const em = db.fork();
    const tenant: TenantEntity = em.create(Tenant, {
      id: randomUUID(),
      kind: 'personal',
      externalId: randomUUID(),
      name: 'Cartório',
      serialPrefix: `Q${randomUUID().replace(/-/g, '').slice(0, 8).toUpperCase()}`,
    });
    await em.flush();
    return { userId: 'owner', email: null, tenant, role: 'owner', ip: '127.0.0.1' };
  }

  const upload = (
    actor: Actor,
    size: number,
    quotaBytes = 0,
    overrides: Partial<NotarizeDeps> = {},
    before?: () => Promise<unknown>,
  ) =>
    notarize(db.fork(), deps(quotaBytes, overrides), actor, {
      kind: 'stored',
      origin: { sourceType: 'upload' },
      source: intake(Buffer.alloc(size, randomUUID()), before),
    });
  const remove = (actor: Actor, id: string, ports = lgpdPorts()) =>
    deleteDocumentUnderLgpd(db.fork(), ports, actor, id, undefined);
  /** The counter and the sum it stands for, in bytes. */
  const counterAndSum = async (tenantId: string) => [
    await storageUsedBytes(db.fork(), tenantId),
    await countStoredBytes(db.fork(), tenantId),
  ];

  beforeAll(async () => {
    ({ db, drop } = await freshDatabase(kind));
    dir = await mkdtemp(path.join(os.tmpdir(), 'notary-quota-'));
    storage = new FsObjectStorage({ root: dir, secret: 's', publicBaseUrl: () => 'http://localhost' });
  }, 120_000);

  afterAll(async () => {
    await db?.close();
    await drop?.();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('concurrent uploads and LGPD deletions in one tenant: the counter ends equal to the sum, within the quota', {
    timeout: 120_000,
  }, async () => {
    const actor = await newTenant();
    const quota = 5_000;
    const first = await Promise.all(Array.from({ length: 10 }, () => upload(actor, 100, quota)));
    expect(await counterAndSum(actor.tenant.id)).toEqual([1_000, 1_000]);

    // 30 uploads of 300 bytes (9,000 in all) against 4,000 free plus the 1,000 the deletions give back: at
    // least 14 must be refused, whatever the order; each document is also deleted twice at once (one 410).
    const results = await Promise.allSettled([
      ...Array.from({ length: 30 }, () => upload(actor, 300, quota)),
      ...first.flatMap((d) => [remove(actor, d.id), remove(actor, d.id)]),
    ]);
    const outcomes = results.map((r) => (r.status === 'fulfilled' ? 'ok' : outcome(r.reason)));
    const uploads = outcomes.slice(0, 30);
    const deletions = outcomes.slice(30);
    expect(uploads.filter((o) => o !== 'ok' && o !== 'PAYLOAD_TOO_LARGE')).toEqual([]);
    expect(uploads.filter((o) => o === 'PAYLOAD_TOO_LARGE').length).toBeGreaterThanOrEqual(14);
    expect(deletions.filter((o) => o === 'ok')).toHaveLength(10);
    expect(deletions.filter((o) => o === 'GONE')).toHaveLength(10);
    const stored = uploads.filter((o) => o === 'ok').length * 300;
    expect(await counterAndSum(actor.tenant.id)).toEqual([stored, stored]);
    expect(stored).toBeLessThanOrEqual(quota);
  });

  it('a failure inside the row transaction moves nothing: the counter changes only with a committed row', async () => {
    const actor = await newTenant();
    await upload(actor, 700);
    const broken = new Error('anchoring queue unavailable');
    // The object is stored, then the transaction fails after the row was written, before the counter.
    await expect(
      upload(actor, 500, 0, { anchoringQueue: { enqueueAnchoring: async () => Promise.reject(broken) } }),
    ).rejects.toBe(broken);
    expect(await counterAndSum(actor.tenant.id)).toEqual([700, 700]);
    // The early check leaves 800 bytes, but another upload of 500 commits while this one's 500 arrive: the
    // counter is incremented, then the quota refuses, and the increment rolls back with the row.
    await expect(upload(actor, 500, 1_500, {}, () => upload(actor, 500))).rejects.toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      message:
        "This workspace's storage quota is full: 1200 bytes of 1500 bytes used, and this file needs 500 bytes. Delete documents or ask the operator for more room.",
    });
    expect(await counterAndSum(actor.tenant.id)).toEqual([1_200, 1_200]);

    // An LGPD deletion whose object storage fails rolls back: the bytes still count.
    const doc = await upload(actor, 300);
    class FailingDelete extends FsObjectStorage {
      override async delete(): Promise<void> {
        throw new AppError('BAD_GATEWAY', 'object storage down');
      }
    }
    const failing = new FailingDelete({ root: dir, secret: 's', publicBaseUrl: () => 'http://localhost' });
    await expect(remove(actor, doc.id, { ...lgpdPorts(), storage: failing })).rejects.toMatchObject({
      code: 'BAD_GATEWAY',
    });
    expect(await counterAndSum(actor.tenant.id)).toEqual([1_500, 1_500]);
    await remove(actor, doc.id);
    expect(await counterAndSum(actor.tenant.id)).toEqual([1_200, 1_200]);
  });

  it('an IPFS import and a capture’s screenshot cost nothing; deleting them gives nothing back', async () => {
    const actor = await newTenant();
    const imported = await notarize(db.fork(), deps(0), actor, {
      kind: 'reference',
      sourceType: 'ipfs',
      sourceUri: 'ipfs://bafkreid7qoywk77r7rj3slobqfekdvs57qwuwh5d2z3sqsw52iabe3mqne',
      source: intake(Buffer.alloc(400, 'i')),
    });
    const screenshotKey = `${actor.tenant.id}/${randomUUID()}`;
    await storage.put(screenshotKey, Readable.from([Buffer.alloc(900, 's')]), {
      signal: new AbortController().signal,
    });
    const captured = await notarize(db.fork(), deps(0), actor, {
      kind: 'stored',
      origin: { sourceType: 'web-capture', sourceUri: 'https://example.com/', screenshotKey },
      source: intake(Buffer.alloc(250, 'w')),
    });
    expect(await counterAndSum(actor.tenant.id)).toEqual([250, 250]);
    await remove(actor, imported.id);
    expect(await counterAndSum(actor.tenant.id)).toEqual([250, 250]);
    await remove(actor, captured.id);
    expect(await counterAndSum(actor.tenant.id)).toEqual([0, 0]);
  });

  it('an organization deletion’s batches take off exactly the counted bytes of the rows they delete', async () => {
    const actor = await newTenant();
    const other = await newTenant();
    const docs = await Promise.all([100, 200, 300, 400].map((size) => upload(actor, size)));
    const theirs = await upload(other, 50);
    await remove(actor, docs[0]?.id ?? '');
    // An LGPD-deleted row (already given back) and another tenant's id (not deleted by this tenant's batch).
    const deleted = await deleteDocumentRows(db.fork(), actor.tenant.id, [
      docs[0]?.id ?? '',
      docs[1]?.id ?? '',
      theirs.id,
    ]);
    expect(deleted).toBe(2);
    expect(await counterAndSum(actor.tenant.id)).toEqual([700, 700]);
    expect(await counterAndSum(other.tenant.id)).toEqual([50, 50]);
    await deleteDocumentRows(db.fork(), actor.tenant.id, [docs[2]?.id ?? '', docs[3]?.id ?? '']);
    expect(await counterAndSum(actor.tenant.id)).toEqual([0, 0]);
    // The tenant's row goes with the tenant.
    await db.fork().nativeDelete(Tenant, { id: actor.tenant.id });
    const left = await (db.fork() as SqlEntityManager).execute(
      'select count(*)::int as n from tenant_storage where tenant_id = ?',
      [actor.tenant.id],
    );
    expect(left).toEqual([{ n: 0 }]);
  });

  it('the repair recomputes a corrupted counter from the rows and reports before and after', async () => {
    const actor = await newTenant();
    const fresh = await newTenant();
    await upload(actor, 1_234);
    await (db.fork() as SqlEntityManager).execute(
      'update tenant_storage set used_bytes = 99 where tenant_id = ?',
      [actor.tenant.id],
    );
    expect(await counterAndSum(actor.tenant.id)).toEqual([99, 1_234]);
    // The quota checks read the counter, never the sum: with 99 counted, 1,300 of a 1,400 quota still fit.
    await upload(actor, 1_300, 1_400);
    await (db.fork() as SqlEntityManager).execute(
      'update tenant_storage set used_bytes = 99 where tenant_id = ?',
      [actor.tenant.id],
    );
    expect(await recountStorage(db.fork(), actor.tenant.id)).toEqual({
      checked: 1,
      drifted: [{ tenantId: actor.tenant.id, before: 99, after: 2_534 }],
    });
    expect(await counterAndSum(actor.tenant.id)).toEqual([2_534, 2_534]);
    // Every tenant: nothing drifted any more (a tenant without a row gets one at 0, which is no drift).
    const all = await recountStorage(db.fork());
    expect(all.drifted).toEqual([]);
    expect(all.checked).toBeGreaterThanOrEqual(2);
    expect(await counterAndSum(fresh.tenant.id)).toEqual([0, 0]);
  });
});

describe.each<Kind>(['pglite', 'postgresql'])('the counter migration on %s', (kind) => {
  let db: Database;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    ({ db, drop } = await freshDatabase(kind, false));
    await db.orm.migrator.up({ to: 'Migration20261126170100' });
  }, 120_000);

  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it('backfills every existing tenant with the sum of its live stored files', async () => {
    const sql = db.fork() as SqlEntityManager;
    const tenant = async (prefix: string) => {
      const id = randomUUID();
      await sql.execute(
        'insert into tenant (id, kind, external_id, name, serial_prefix, created_at) values (?, ?, ?, ?, ?, now())',
        [id, 'personal', `legacy-${id}`, `Legacy ${prefix}`, prefix],
      );
      return id;
    };
    const document = async (tenantId: string, size: number, state: 'live' | 'reference' | 'deleted') => {
      await sql.execute(
        `insert into document (id, tenant_id, serial_number, file_name, file_size, mime_type, sha256_hash,
                               source_type, storage_key, consent_given, consent_timestamp, uploader_user_id,
                               created_at, deleted_at)
         values (?, ?, ?, 'f.txt', ?, 'text/plain', ?, ?, ?, true, now(), 'u', now(), ?)`,
        [
          randomUUID(),
          tenantId,
          `M-${randomUUID().slice(0, 12)}`,
          size,
          randomUUID().replace(/-/g, '').padEnd(64, '0'),
          state === 'reference' ? 'ipfs' : 'upload',
          state === 'live' ? `${tenantId}/${randomUUID()}` : null,
          state === 'deleted' ? new Date() : null,
        ],
      );
    };
    const busy = await tenant('BUSY');
    const empty = await tenant('EMPTY');
    // Past 2^31 in all: the counter is a bigint.
    await document(busy, 3_000_000_000, 'live');
    await document(busy, 25, 'live');
    await document(busy, 400, 'reference');
    await document(busy, 800, 'deleted');

    await db.orm.migrator.up();

    const rows: { tenant_id: string; used_bytes: string | number }[] = await sql.execute(
      'select tenant_id, used_bytes from tenant_storage where tenant_id in (?, ?)',
      [busy, empty],
    );
    expect(Object.fromEntries(rows.map((r) => [r.tenant_id, Number(r.used_bytes)]))).toEqual({
      [busy]: 3_000_000_025,
      [empty]: 0,
    });
    expect(await storageUsedBytes(db.fork(), busy)).toBe(await countStoredBytes(db.fork(), busy));
  });
});
