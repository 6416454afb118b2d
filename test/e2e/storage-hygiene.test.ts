import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { sweepOrphanedObjects } from '@notary/server/domain/documents/orphans';
import type { DocumentDto } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, jsonRequest } from '../harness/http';
import { startTestService, storedKeys, type TestService } from '../harness/service';
import { freshEmail, makeOrg, type TestOrg } from '../harness/tenants';

const run = promisify(execFile);
const MB = 1024 * 1024;
const QUOTA = 3 * MB;

/** Uploads `bytes` as a file named `name`; the status and body as the server sent them. */
async function upload(base: string, token: string, bytes: Uint8Array, name = 'file.bin') {
  const form = new FormData();
  form.set('consent', 'true');
  form.set('file', new Blob([bytes]), name);
  const res = await fetch(`${base}/api/documents/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/**
 * Storage hygiene: the per-tenant quota, early answers that ordinary clients can read, and the sweep of objects that no
 * document references. Embedded database and local object storage, as `npm start` runs.
 */
describe('storage quota, early answers and orphan sweep', () => {
  let t: TestService;
  let org: TestOrg;
  let dir: string;

  beforeAll(async () => {
    t = await startTestService('pglite', { TENANT_STORAGE_QUOTA_BYTES: String(QUOTA) });
    org = await makeOrg(t, 'Quota', [
      ['owner@quota.test', 'owner'],
      ['reader@quota.test', 'reader'],
    ]);
    dir = await mkdtemp(path.join(os.tmpdir(), 'notary-early-'));
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a tenant keeps at most its quota; the upload past it is 413 and stores nothing; others are unaffected', async () => {
    const token = await t.token(freshEmail('q'));
    const first = await upload(t.url, token, randomBytes(2 * MB));
    expect(first.status).toBe(201);
    const keysBefore = await storedKeys(t);
    // Past what is left: 413 as soon as the stream passes it.
    const second = await upload(t.url, token, randomBytes(2 * MB));
    expect(second.status).toBe(413);
    expect(second.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(String(second.body.message)).toMatch(/storage quota/);
    expect(await storedKeys(t)).toEqual(keysBefore);
    // What fits still fits.
    expect((await upload(t.url, token, randomBytes(512 * 1024))).status).toBe(201);
    // Another tenant has its own quota.
    expect((await upload(t.url, await t.token(freshEmail('q2')), randomBytes(2 * MB))).status).toBe(201);
    // An LGPD deletion gives the room back.
    const deleted = await jsonRequest(t.url, 'DELETE', `/api/documents/${first.body.id}`, { token });
    expect(deleted.status).toBe(200);
    expect((await upload(t.url, token, randomBytes(2 * MB))).status).toBe(201);
  });

  it('two concurrent uploads cannot share the last free bytes: exactly one is 201', async () => {
    const token = await t.token(freshEmail('race'));
    const keysBefore = (await storedKeys(t)).length;
    const both = await Promise.all([
      upload(t.url, token, randomBytes(2 * MB)),
      upload(t.url, token, randomBytes(2 * MB)),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([201, 413]);
    const listed = await api<{ documents: DocumentDto[] }>(t.url, '/api/documents', { token });
    expect(listed.body.documents).toHaveLength(1);
    // The refused upload's object was removed before its answer.
    expect((await storedKeys(t)).length).toBe(keysBefore + 1);
  });

  it('early answers (401, 403, 413) reach curl and fetch as statuses for files of 1 MB and 100 MB', async () => {
    const full = await t.token(freshEmail('full'));
    expect((await upload(t.url, full, randomBytes(QUOTA - 1024))).status).toBe(201);
    const cases: [number, string][] = [
      [401, 'not-a-token'],
      [403, org.tokens['reader@quota.test'] ?? ''],
      [413, full],
    ];
    for (const size of [1, 100]) {
      const file = path.join(dir, `${size}mb.bin`);
      await writeFile(file, Buffer.alloc(size * MB, 7));
      for (const [status, token] of cases) {
        const curl = await run('curl', [
          '-sS',
          '-o',
          '/dev/null',
          '-w',
          '%{http_code}',
          '-H',
          `authorization: Bearer ${token}`,
          '-F',
          'consent=true',
          '-F',
          `file=@${file}`,
          `${t.url}/api/documents/upload`,
        ]);
        expect(`${size} MB curl ${curl.stdout}`).toBe(`${size} MB curl ${status}`);
        const form = new FormData();
        form.set('consent', 'true');
        form.set('file', new Blob([Buffer.alloc(size * MB, 7)]), 'big.bin');
        const res = await fetch(`${t.url}/api/documents/upload`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
          body: form,
        });
        expect(`${size} MB fetch ${res.status}`).toBe(`${size} MB fetch ${status}`);
        expect(await res.json()).toHaveProperty('message');
      }
    }
  }, 120_000);

  it('the sweep removes objects no live document references, never a young one, and the CLI runs it', async () => {
    const token = await t.token(freshEmail('sweep'));
    const kept = await upload(t.url, token, randomBytes(1024), 'kept.bin');
    expect(kept.status).toBe(201);
    const storage = t.service.deps.storage;
    // Bytes whose process died before the row: stored under a tenant prefix, referenced by nothing.
    const orphan = `${randomBytes(8).toString('hex')}/orphan-object`;
    await storage.put(orphan, Readable.from([Buffer.from('orphaned bytes')]));
    const em = t.service.deps.db.fork();

    const now = await sweepOrphanedObjects(em, storage);
    expect(now.removed).toEqual([]);
    expect(now.young).toBeGreaterThanOrEqual(1);
    expect(await storage.exists(orphan)).toBe(true);

    // Two hours later the orphan is past the grace period; every referenced object stays.
    const later = await sweepOrphanedObjects(em, storage, { now: new Date(Date.now() + 2 * 3600_000) });
    expect(later.removed).toContain(orphan);
    expect(await storage.exists(orphan)).toBe(false);
    const download = await api<{ downloadUrl: string }>(t.url, `/api/documents/${kept.body.id}/download`, {
      token,
    });
    expect(download.status).toBe(200);
    expect((await fetch(download.body.downloadUrl)).status).toBe(200);

    // The operator command, through the CLI and the running server's admin socket (embedded database).
    const again = `${randomBytes(8).toString('hex')}/orphan-object`;
    await storage.put(again, Readable.from([Buffer.from('more orphaned bytes')]));
    const out = await run(
      path.resolve('node_modules/.bin/node'),
      ['--import', 'tsx', path.resolve('server/src/cli/main.ts'), 'storage:sweep', '--grace-minutes', '0'],
      { env: { ...process.env, DATA_DIR: t.dataDir, LOG_LEVEL: 'warn' } },
    );
    expect(out.stdout.trim().split('\n')).toContain(`removed\t${again}`);
    expect(await storage.exists(again)).toBe(false);
    expect((await fetch(download.body.downloadUrl)).status).toBe(200);
  });
});
