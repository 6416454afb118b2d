import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ListMultipartUploadsCommand } from '@aws-sdk/client-s3';
import type { S3ObjectStorage } from '@notary/server/adapters/storage/s3';
import { sweepOrphanedObjects } from '@notary/server/domain/documents/orphans';
import type { DocumentDto } from '@notary/shared';
import { errorMessage } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Child, freePort } from '../bench/lib';
import { api } from '../harness/http';
import { startNpmStart } from '../harness/npm-start';
import { createTestDatabase } from '../harness/postgres';
import { type RadosgwServer, radosgwAvailable, startRadosgw } from '../harness/radosgw';
import { startTestService, type TestService } from '../harness/service';
import { freshEmail } from '../harness/tenants';

const MB = 1024 * 1024;

async function upload(base: string, token: string, bytes: Uint8Array, name: string) {
  const form = new FormData();
  form.set('consent', 'true');
  form.set('file', new Blob([bytes]), name);
  const res = await fetch(`${base}/api/documents/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  return { status: res.status, body: (await res.json()) as DocumentDto };
}

/**
 * An instance killed with SIGKILL in the middle of an upload: every upload it answered 201 is intact on the other
 * instance (row, bytes, hash), the interrupted one left no row, and what it left in the bucket (an incomplete multipart
 * upload) is removed by the sweep. Kills at random moments under concurrent uploads, restarted each time, with
 * anchoring on both chains: chaos.test.ts.
 */
describe.skipIf(!radosgwAvailable())('SIGKILL mid-upload on one of two instances', () => {
  let rgw: RadosgwServer;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let victim: Child;
  let victimUrl: string;
  let survivor: TestService;
  let dataDir: string;

  beforeAll(async () => {
    [rgw, database] = await Promise.all([startRadosgw(), createTestDatabase()]);
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-crash-'));
    const env = {
      DATABASE_URL: database.url,
      PUBLIC_URL: 'http://notary.test',
      SECRET: randomBytes(32).toString('hex'),
      S3_ENDPOINT: rgw.endpoint,
      S3_BUCKET: `notary-crash-${randomBytes(4).toString('hex')}`,
      S3_REGION: rgw.region,
      S3_ACCESS_KEY_ID: rgw.accessKeyId,
      S3_SECRET_ACCESS_KEY: rgw.secretAccessKey,
      ANCHORING: 'off',
      RATE_LIMITS: 'off',
    };
    // The survivor creates the schema and the bucket; the victim is its own process, so it can be killed.
    survivor = await startTestService('postgresql', env);
    const port = await freePort();
    victim = startNpmStart(dataDir, port, { ...env, NODE_ENV: 'test' });
    await victim.waitForLine(/\[notary\] listening on/, 120_000);
    victimUrl = `http://127.0.0.1:${port}`;
  }, 240_000);

  afterAll(async () => {
    await victim?.stop();
    await survivor?.close();
    await database?.drop();
    await rgw?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('loses nothing answered 201; the interrupted upload leaves no row, and the sweep clears its parts', async () => {
    const token = await survivor.token(freshEmail('crash'));
    const answered: { doc: DocumentDto; sha256: string }[] = [];
    for (let i = 0; i < 4; i++) {
      const bytes = randomBytes((i + 1) * 3 * MB);
      const res = await upload(victimUrl, token, bytes, `answered-${i}.bin`);
      expect(res.status).toBe(201);
      answered.push({ doc: res.body, sha256: createHash('sha256').update(bytes).digest('hex') });
    }

    // A 100 MB upload that the client feeds slowly: once the victim has started its multipart upload (its
    // first 8 MiB part is on the way to S3), the process is killed.
    const storage = survivor.service.deps.storage as S3ObjectStorage;
    const inFlight = async () =>
      ((await storage.client.send(new ListMultipartUploadsCommand({ Bucket: storage.bucket }))).Uploads ?? [])
        .length;
    expect(await inFlight()).toBe(0);
    let sent = 0;
    const chunk = randomBytes(MB);
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (sent >= 100 * MB) return controller.close();
        controller.enqueue(chunk);
        sent += chunk.length;
        // Past 20 MB, hold the stream until the victim is killed.
        if (sent >= 20 * MB) await victim.exited;
      },
    });
    const boundary = 'crashboundary';
    const head = `--${boundary}\r\ncontent-disposition: form-data; name="consent"\r\n\r\ntrue\r\n--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="killed.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`;
    const multipart = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(new TextEncoder().encode(head));
        const reader = body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          controller.enqueue(value);
        }
        controller.close();
      },
    });
    const killed = fetch(`${victimUrl}/api/documents/upload`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
      body: multipart,
      duplex: 'half',
    } as RequestInit).then(
      (r) => r.status,
      (e: unknown) => errorMessage(e),
    );
    const deadline = Date.now() + 60_000;
    while ((await inFlight()) === 0) {
      if (Date.now() > deadline) throw new Error('the victim never started its multipart upload');
      await new Promise((r) => setTimeout(r, 50));
    }
    victim.process.kill('SIGKILL');
    expect(await victim.exited).toBe('SIGKILL');
    expect(await killed).not.toBe(201);

    // Everything answered 201 is there, on the other instance, byte for byte.
    const listed = await api<{ documents: DocumentDto[] }>(survivor.url, '/api/documents', { token });
    expect(listed.body.documents.map((d) => d.id).sort()).toEqual(answered.map((a) => a.doc.id).sort());
    for (const { doc, sha256 } of answered) {
      const link = await api<{ downloadUrl: string }>(survivor.url, `/api/documents/${doc.id}/download`, {
        token,
      });
      const bytes = new Uint8Array(await (await fetch(link.body.downloadUrl)).arrayBuffer());
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(sha256);
      expect(doc.sha256Hash).toBe(sha256);
    }

    // The interrupted upload left parts (billed, unlisted) and no object; the sweep removes the parts.
    expect(await inFlight()).toBe(1);
    const report = await sweepOrphanedObjects(survivor.service.deps.db.fork(), storage, {
      incompleteMaxAgeMs: 0,
      now: new Date(Date.now() + 1000),
    });
    expect(report.incompleteUploads).toBe(1);
    expect(report.removed).toEqual([]);
    expect(await inFlight()).toBe(0);
  }, 240_000);
});
