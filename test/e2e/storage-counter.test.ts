import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { countStoredBytes, storageUsedBytes } from '@notary/server/domain/documents/quota';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from '../harness/http';
import { createTestDatabase } from '../harness/postgres';
import { DATABASE_KINDS, startTestService, type TestService } from '../harness/service';
import { freshEmail, makeOrg, type TestOrg } from '../harness/tenants';

/**
 * The storage quota's used-bytes counter through the real service on PGlite and PostgreSQL: concurrent
 * uploads and LGPD deletions over HTTP in one organization leave it equal to the sum of the stored files
 * (the quota holding), and `npm run notary -- storage:recount` as an operator runs it (a separate process:
 * through the admin socket of the running server on PGlite, on the database itself on PostgreSQL) repairs a
 * counter corrupted on purpose and prints before and after.
 */

const QUOTA = 20_000;
const FILE = 1_500;

describe.each(DATABASE_KINDS)('storage counter with %s', (kind) => {
  let t: TestService;
  let org: TestOrg;
  let owner: string;
  let databaseUrl: string | undefined;
  let dropDatabase: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    if (kind === 'postgresql') {
      const pg = await createTestDatabase();
      databaseUrl = pg.url;
      dropDatabase = pg.drop;
    }
    t = await startTestService(kind, {
      TENANT_STORAGE_QUOTA_BYTES: String(QUOTA),
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    });
    owner = freshEmail('owner');
    org = await makeOrg(t, 'Cartório', [[owner, 'owner']]);
  });
  afterAll(async () => {
    await t?.close();
    await dropDatabase?.();
  });

  /** Uploads `size` bytes (distinct content) as the owner; resolves with the status and body. */
  const upload = async (size: number, seed: number) => {
    const form = new FormData();
    form.set('consent', 'true');
    form.set('file', new Blob([Buffer.alloc(size, `file ${seed} `)]), `file-${seed}.txt`);
    const res = await fetch(`${t.url}/api/documents/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.tokens[owner]}` },
      body: form,
    });
    return { status: res.status, body: (await res.json()) as { id?: string; message?: string } };
  };
  const counterAndSum = async () => [
    await storageUsedBytes(t.service.deps.db.fork(), org.tenantId),
    await countStoredBytes(t.service.deps.db.fork(), org.tenantId),
  ];

  /** `npm run notary -- <args>` in its own process, as an operator runs it beside the service. */
  const cli = async (...args: string[]) => {
    const env = {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      ANCHORING: 'off',
      DATA_DIR: t.dataDir,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    };
    const { stdout } = await promisify(execFile)(
      path.resolve('node_modules/.bin/node'),
      ['--import', 'tsx', path.resolve('server/src/cli/main.ts'), ...args],
      { env },
    );
    return stdout.trim();
  };

  it('concurrent uploads and deletions over HTTP: the counter equals the stored files, within the quota', {
    timeout: 120_000,
  }, async () => {
    const first = await Promise.all(Array.from({ length: 6 }, (_, i) => upload(FILE, i)));
    expect(first.map((r) => r.status)).toEqual(Array(6).fill(201));
    expect(await counterAndSum()).toEqual([6 * FILE, 6 * FILE]);

    // 14 more files (21,000 bytes) against 11,000 free plus the 9,000 the deletions give back: some are 413.
    const [uploads, deletions] = await Promise.all([
      Promise.all(Array.from({ length: 14 }, (_, i) => upload(FILE, 100 + i))),
      Promise.all(
        first.map((r) =>
          request(t, 'DELETE', `/api/documents/${r.body.id}`, { token: org.tokens[owner] as string }),
        ),
      ),
    ]);
    expect(deletions.map((d) => d.status)).toEqual(Array(6).fill(200));
    expect(uploads.filter((u) => u.status !== 201 && u.status !== 413)).toEqual([]);
    const refused = uploads.filter((u) => u.status === 413);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const r of refused) expect(r.body.message).toMatch(/storage quota/);
    const stored = uploads.filter((u) => u.status === 201).length * FILE;
    expect(stored).toBeLessThanOrEqual(QUOTA);
    expect(await counterAndSum()).toEqual([stored, stored]);
  });

  it('storage:recount, run by an operator beside the service, repairs a corrupted counter', {
    timeout: 240_000,
  }, async () => {
    const [, sum] = await counterAndSum();
    await (t.service.deps.db.fork() as SqlEntityManager).execute(
      'update tenant_storage set used_bytes = ? where tenant_id = ?',
      [QUOTA, org.tenantId],
    );
    // The corrupted counter is what the quota reads: the workspace looks full.
    const full = await upload(100, 999);
    expect(full.status).toBe(413);

    expect((await cli('storage:recount', '--tenant', org.slug)).split('\n')).toEqual([
      'checked\t1',
      'drifted\t1',
      `drifted\t${org.tenantId}\t${QUOTA}\t${sum}`,
    ]);
    expect(await counterAndSum()).toEqual([sum, sum]);
    expect((await upload(100, 1_000)).status).toBe(201);
    // Every tenant, by id order: nothing left to correct.
    const all = (await cli('storage:recount')).split('\n');
    expect(all[1]).toBe('drifted\t0');
    expect((await cli('storage:recount', '--tenant', org.tenantId)).split('\n')).toEqual([
      'checked\t1',
      'drifted\t0',
    ]);
  });
});
