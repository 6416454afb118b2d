import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Child, startChild } from '../bench/lib';
import { NODE, ROOT } from '../harness/npm-start';
import { createTestDatabase } from '../harness/postgres';
import { startTestService, type TestService } from '../harness/service';
import { type SmtpSink, startSmtpSink } from '../harness/smtp';
import { freshEmail, makeOrg, type TestOrg } from '../harness/tenants';

/**
 * An organization deletion of a few thousand documents, batch by batch, in a process killed with SIGKILL
 * right after its second batch committed, then finished by the next service's resume job: nothing of the
 * organization is left (rows, stored objects, the organization at the provider), its members are notified
 * once, another organization keeps everything, and the progress shows along the way (the process's lines,
 * `org:deletion-status`). PostgreSQL only: the killed process and the services share the database in turn.
 */

const DOCUMENTS = 2000;
const BATCH = 100;

/** Rows for `count` documents of `tenantId`, one statement; returns their storage keys. */
async function insertDocuments(t: TestService, tenantId: string, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, () => randomUUID());
  const keys = ids.map((id) => `${tenantId}/${id}`);
  const prefix = randomBytes(3).toString('hex').toUpperCase();
  await (t.service.deps.db.fork() as SqlEntityManager).execute(
    `insert into document (id, tenant_id, serial_number, file_name, file_size, mime_type, sha256_hash, source_type,
                           storage_key, consent_given, consent_timestamp, uploader_user_id, created_at)
     select id, ?, ? || '-' || n, 'f.txt', 5, 'text/plain', repeat('a', 64), 'upload', ? || '/' || id, true, now(),
            'u1', now()
       from unnest(?::uuid[]) with ordinality as x(id, n)`,
    [tenantId, prefix, tenantId, `{${ids.join(',')}}`],
  );
  // The objects, a few puts at a time.
  let next = 0;
  const storage = t.service.deps.storage;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < keys.length) {
        const key = keys[next++] as string;
        await storage.put(key, Readable.from([Buffer.from('bytes')]));
      }
    }),
  );
  return keys;
}

async function keysUnder(t: TestService, prefix: string): Promise<number> {
  let n = 0;
  for await (const o of t.service.deps.storage.listObjects(prefix)) if (o.key.startsWith(prefix)) n++;
  return n;
}

async function count(t: TestService, sql: string, params: unknown[]): Promise<number> {
  const rows: { n: string | number }[] = await (t.service.deps.db.fork() as SqlEntityManager).execute(
    sql,
    params,
  );
  return Number(rows[0]?.n ?? 0);
}

describe('organization deletion killed midway and resumed', () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dataDir: string;
  let sink: SmtpSink;
  let env: Record<string, string>;
  let t: TestService | undefined;
  let child: Child | undefined;

  beforeAll(async () => {
    [database, sink] = await Promise.all([createTestDatabase(), startSmtpSink()]);
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-org-resume-'));
    env = {
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      SMTP_URL: sink.url,
      SECRET: randomBytes(32).toString('hex'),
      PUBLIC_URL: 'http://notary.test',
    };
  }, 60_000);

  afterAll(async () => {
    await child?.stop();
    await t?.close();
    await sink?.stop();
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('resumes after SIGKILL and leaves nothing of the organization', async () => {
    t = await startTestService('postgresql', env);
    const owner = freshEmail('owner');
    const admin = freshEmail('admin');
    const org: TestOrg = await makeOrg(t, 'Cartório Grande', [
      [owner, 'owner'],
      [admin, 'admin'],
    ]);
    const neighbourOwner = freshEmail('neighbour');
    const neighbour = await makeOrg(t, 'Cartório Vizinho', [[neighbourOwner, 'owner']]);
    await insertDocuments(t, org.tenantId, DOCUMENTS);
    const neighbourKeys = await insertDocuments(t, neighbour.tenantId, 3);
    expect(await keysUnder(t, `${org.tenantId}/`)).toBe(DOCUMENTS);
    await t.close();
    t = undefined;

    // The deletion, in a process of its own, killed right after its second batch committed.
    child = startChild(
      'org-deletion',
      NODE,
      [
        '--import',
        'tsx',
        path.join(ROOT, 'test/e2e/org-deletion-run.testing.ts'),
        org.tenantId,
        String(BATCH),
        '2',
      ],
      { cwd: ROOT, env: { ...process.env, ...env, NODE_ENV: 'test', LOG_LEVEL: 'warn', ANCHORING: 'off' } },
    );
    await child.waitForLine(/batch 2 done/, 120_000);
    child.process.kill('SIGKILL');
    expect(await child.exited).toBe('SIGKILL');
    expect(child.tail()).toContain(
      `${org.tenantId}: batch 1 done, ${BATCH} documents deleted, ${DOCUMENTS - BATCH} left`,
    );
    expect(child.tail()).toContain(
      `${org.tenantId}: batch 2 done, ${2 * BATCH} documents deleted, ${DOCUMENTS - 2 * BATCH} left`,
    );

    // What the killed process left: two batches gone (objects and rows), the rest intact, the progress recorded.
    // Its lease has not run out yet, so a service started now leaves the deletion alone.
    t = await startTestService('postgresql', env);
    const left = DOCUMENTS - 2 * BATCH;
    expect(await count(t, 'select count(*) as n from document where tenant_id = ?', [org.tenantId])).toBe(
      left,
    );
    expect(await keysUnder(t, `${org.tenantId}/`)).toBe(left);
    const status = (await t.operator({ command: 'org:deletion-status' })).split('\t');
    expect(status.slice(0, 8)).toEqual([
      org.tenantId,
      expect.stringMatching(/^Cartório Grande \d+$/),
      'documents',
      'running',
      `documents ${2 * BATCH}/${DOCUMENTS}`,
      `left ${left}`,
      'batches 2',
      expect.stringMatching(/^started \d{4}-/),
    ]);
    // Later: the killed process's lease has run out (a minute ago), and the next service's start finishes it.
    await count(
      t,
      `update org_deletion set lease_until = now() - interval '1 minute', progress_at = now() - interval '3 minutes'
        where tenant_id = ? returning 1 as n`,
      [org.tenantId],
    );
    await t.close();
    t = undefined;
    t = await startTestService('postgresql', env);
    const service = t;
    const deadline = Date.now() + 120_000;
    while ((await count(service, 'select count(*) as n from tenant where id = ?', [org.tenantId])) > 0) {
      if (Date.now() > deadline) throw new Error('the resume job did not finish the deletion');
      await new Promise((r) => setTimeout(r, 100));
    }

    expect(await count(t, 'select count(*) as n from document where tenant_id = ?', [org.tenantId])).toBe(0);
    expect(await count(t, 'select count(*) as n from org_deletion where tenant_id = ?', [org.tenantId])).toBe(
      0,
    );
    expect(
      await count(t, 'select count(*) as n from tenant_member where tenant_id = ?', [org.tenantId]),
    ).toBe(0);
    expect(await keysUnder(t, `${org.tenantId}/`)).toBe(0);
    expect(await t.service.deps.directory.getOrganization(org.id)).toBeNull();
    expect(await t.operator({ command: 'org:deletion-status' })).toBe('none');
    // The neighbour keeps its rows and objects.
    expect(
      await count(t, 'select count(*) as n from document where tenant_id = ?', [neighbour.tenantId]),
    ).toBe(3);
    for (const key of neighbourKeys) expect(await t.service.deps.storage.exists(key)).toBe(true);
    // Each member got one notice, with no organization name in its subject.
    for (const who of [owner, admin]) {
      const notices = sink.to(who);
      expect(notices, who).toHaveLength(1);
      expect(notices[0]?.parsed.subject).not.toContain('Cartório');
      expect(notices[0]?.parsed.text).toContain('Cartório Grande');
    }
  }, 600_000);
});
