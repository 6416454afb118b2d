import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR, sha256sum } from '../harness/fixtures';
import { api, uploadFile } from '../harness/http';
import { startRadosgw } from '../harness/radosgw';
import { startTestService, storedKeys, type TestService } from '../harness/service';

/** The main job with the production storage adapter: a real S3 server (Ceph radosgw) on loopback. */
describe('documents on S3 (radosgw)', () => {
  let rgw: Awaited<ReturnType<typeof startRadosgw>>;
  let t: TestService;
  let token: string;

  beforeAll(async () => {
    rgw = await startRadosgw();
    t = await startTestService('pglite', {
      S3_ENDPOINT: rgw.endpoint,
      S3_BUCKET: 'notary-e2e',
      S3_REGION: rgw.region,
      S3_ACCESS_KEY_ID: rgw.accessKeyId,
      S3_SECRET_ACCESS_KEY: rgw.secretAccessKey,
    });
    token = await t.token('s3@example.com');
  });
  afterAll(async () => {
    await t?.close();
    await rgw?.stop();
  });

  it('uploads, downloads the same bytes, and views with the right disposition through presigned URLs', async () => {
    expect(t.service.deps.storage.kind).toBe('s3');
    for (const [name, inline] of [
      ['pdfs/tracemonkey.pdf', true],
      ['files/evil.svg', false],
    ] as const) {
      const file = path.join(FIXTURES_DIR, name);
      const up = await uploadFile(t.url, token, file);
      expect(up.status).toBe(201);
      expect(up.body.sha256Hash).toBe(await sha256sum(file));
      const dl = await api<{ downloadUrl: string }>(t.url, `/api/documents/${up.body.id}/download`, {
        token,
      });
      expect(new URL(dl.body.downloadUrl).origin).toBe(new URL(rgw.endpoint).origin);
      const bytes = await fetch(dl.body.downloadUrl);
      expect(bytes.headers.get('content-type')).toBe('application/octet-stream');
      expect(Buffer.from(await bytes.arrayBuffer()).equals(await readFile(file))).toBe(true);
      const view = await api<{ viewUrl: string; inline: boolean }>(
        t.url,
        `/api/documents/${up.body.id}/view`,
        { token },
      );
      expect(view.body.inline).toBe(inline);
      const viewed = await fetch(view.body.viewUrl);
      expect(viewed.headers.get('content-disposition')).toMatch(inline ? /^inline/ : /^attachment/);
      // A tampered presigned URL is refused by the S3 server itself.
      const tampered = new URL(view.body.viewUrl);
      tampered.searchParams.set('response-content-type', 'text/html');
      expect((await fetch(tampered)).status).toBe(403);
    }
    expect(await storedKeys(t)).toHaveLength(2);
  });

  it('a missing consent leaves no object in the bucket', async () => {
    const res = await uploadFile(t.url, token, path.join(FIXTURES_DIR, 'files/contrato.txt'), {});
    expect(res.status).toBe(400);
    expect(await storedKeys(t)).toHaveLength(2);
  });
});
