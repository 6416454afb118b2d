import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestPglite } from '../../../../test/harness/db-templates';
import { type RadosgwServer, startRadosgw } from '../../../../test/harness/radosgw';
import { FsObjectStorage } from '../../adapters/storage/fs';
import { S3ObjectStorage } from '../../adapters/storage/s3';
import type { Database } from '../../db';
import { Tenant } from '../../db/entities';
import type { ObjectStorage } from '../../ports/storage';
import { sweepOrphanedObjects } from './orphans';

/**
 * The orphan sweep over several pages of listed objects, on local files and on a real S3 server (radosgw,
 * listing 7 keys per ListObjectsV2 page): one database query per page of the sweep, whatever the number of
 * objects; objects a live document names (as its file or its screenshot) stay, those of an LGPD-deleted row
 * or of no row go.
 */
describe.each(['fs', 's3 (radosgw)'] as const)('orphan sweep over many pages: %s', (kind) => {
  let db: Database;
  let dir: string;
  let rgw: RadosgwServer | undefined;
  let storage: ObjectStorage;
  let tenantId: string;

  beforeAll(async () => {
    db = await openTestPglite();
    dir = await mkdtemp(path.join(os.tmpdir(), 'notary-orphans-'));
    if (kind === 'fs') {
      storage = new FsObjectStorage({ root: dir, secret: 's', publicBaseUrl: () => 'http://localhost' });
    } else {
      rgw = await startRadosgw();
      const s3 = new S3ObjectStorage(
        {
          kind: 's3',
          endpoint: rgw.endpoint,
          bucket: `notary-orphans-${randomBytes(4).toString('hex')}`,
          region: rgw.region,
          accessKeyId: rgw.accessKeyId,
          secretAccessKey: rgw.secretAccessKey,
          forcePathStyle: true,
        },
        { listPageSize: 7 },
      );
      await s3.ensureBucket();
      storage = s3;
    }
    const em = db.fork();
    const tenant = em.create(Tenant, {
      id: randomUUID(),
      kind: 'personal',
      externalId: 'u-orphans',
      name: 'T',
      serialPrefix: 'OR',
    });
    await em.flush();
    tenantId = tenant.id;
  }, 120_000);

  afterAll(async () => {
    await db?.close();
    await rgw?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('checks each page in one query and removes exactly the unreferenced objects', async () => {
    const put = (key: string) => storage.put(key, Readable.from([Buffer.from(key)]));
    const files = Array.from({ length: 30 }, () => `${tenantId}/${randomUUID()}`);
    const shots = Array.from({ length: 10 }, () => `screenshots/${randomUUID()}.png`);
    const lgpd = Array.from({ length: 5 }, () => `${tenantId}/${randomUUID()}`);
    const strays = Array.from({ length: 17 }, (_, i) => `${i % 2 ? tenantId : randomUUID()}/${randomUUID()}`);
    for (const key of [...files, ...shots, ...lgpd, ...strays]) await put(key);
    // Rows: 30 live documents (the first 10 with a screenshot), 5 deleted under the LGPD (keys kept on record).
    const rows = [
      ...files.map((key, i) => ({ key, shot: shots[i] ?? null, deleted: false })),
      ...lgpd.map((key) => ({ key, shot: null, deleted: true })),
    ];
    const sql = db.fork() as SqlEntityManager;
    for (const [i, r] of rows.entries()) {
      await sql.execute(
        `insert into document (id, tenant_id, serial_number, file_name, file_size, mime_type, sha256_hash,
                               source_type, storage_key, screenshot_key, consent_given, consent_timestamp,
                               uploader_user_id, created_at, deleted_at)
         values (?, ?, ?, 'f', 1, 'text/plain', ?, 'upload', ?, ?, true, now(), 'u', now(), ?)`,
        [randomUUID(), tenantId, `OR-${i}`, 'a'.repeat(64), r.key, r.shot, r.deleted ? new Date() : null],
      );
    }

    const total = files.length + shots.length + lgpd.length + strays.length;
    const report = await sweepOrphanedObjects(db.fork(), storage, {
      now: new Date(Date.now() + 2 * 3600_000),
      pageSize: 8,
    });
    expect(report.scanned).toBe(total);
    expect(report.queries).toBe(Math.ceil(total / 8));
    expect(report.removedCount).toBe(lgpd.length + strays.length);
    expect(new Set(report.removed)).toEqual(new Set([...lgpd, ...strays]));
    expect(report.young).toBe(0);

    const left: string[] = [];
    for await (const o of storage.listObjects()) left.push(o.key);
    expect(new Set(left)).toEqual(new Set([...files, ...shots]));
    // Ordered listing (operators, tests) still agrees with the streamed one.
    const ordered: string[] = [];
    for await (const k of storage.list()) ordered.push(k);
    expect(ordered).toEqual([...left].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  }, 120_000);
});
