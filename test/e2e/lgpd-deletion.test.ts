import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  CreateBucketCommand,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { S3ObjectStorage } from '@notary/server/adapters/storage/s3';
import { Document, DocumentDeletion } from '@notary/server/db/entities';
import { AppError } from '@notary/shared';
import { Wallet } from 'ethers';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { FIXTURES_DIR, sha256sum } from '../harness/fixtures';
import { api, jsonRequest, uploadFile } from '../harness/http';
import { type RadosgwServer, startRadosgw } from '../harness/radosgw';
import { DATABASE_KINDS, startTestService, storedKeys, type TestService } from '../harness/service';
import { freshEmail, makeOrg } from '../harness/tenants';
import { walletAccessMessage } from '../harness/wallet';

/**
 * LGPD deletion (spec, What the service does: item 8, and States and transitions; see also docs/sharing.md,
 * LGPD deletion) on a real S3 server
 * (radosgw) with PGlite and PostgreSQL (the latter on a bucket with versioning enabled): who may delete (an
 * uploader demoted to reader no longer), a refused or failing request deleting nothing, the object gone from
 * the bucket with every version while hash, serial and anchors stay verifiable, the document leaving lists,
 * the acervo feed and every share, 410 on download, view and publish, the audit trail, the public
 * verification cache invalidated, and two deletions racing.
 */

const PDF = path.join(FIXTURES_DIR, 'pdfs/tracemonkey.pdf');
const TXT = path.join(FIXTURES_DIR, 'files/contrato.txt');

type Body = Record<string, unknown>;

describe('LGPD deletion on S3 (radosgw)', () => {
  let rgw: RadosgwServer;
  beforeAll(async () => {
    rgw = await startRadosgw();
  });
  afterAll(async () => {
    await rgw?.stop();
  });

  it('a bucket with S3 Object Lock is refused at start: its retention would keep deleted files', async () => {
    const Bucket = `notary-locked-${randomUUID().slice(0, 8)}`;
    const config = {
      kind: 's3' as const,
      endpoint: rgw.endpoint,
      bucket: Bucket,
      region: rgw.region,
      accessKeyId: rgw.accessKeyId,
      secretAccessKey: rgw.secretAccessKey,
      forcePathStyle: true,
    };
    const storage = new S3ObjectStorage(config);
    try {
      await storage.client.send(new CreateBucketCommand({ Bucket, ObjectLockEnabledForBucket: true }));
      const refused = await storage.ensureBucket().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(refused).toBeInstanceOf(AppError);
      expect((refused as AppError).message).toMatch(/Object Lock enabled/);
      // A plain bucket (versioned or not) passes.
      await new S3ObjectStorage({ ...config, bucket: `${Bucket}-plain` }).ensureBucket();
    } finally {
      storage.client.destroy();
    }
  });

  describe.each(DATABASE_KINDS)('with %s', (kind) => {
    // PostgreSQL runs on a versioned bucket: a plain DeleteObject would only hide the bytes behind a marker.
    const versioned = kind === 'postgresql';
    const bucket = `notary-lgpd-${kind}`;
    let s3: S3Client;
    let t: TestService;
    const req = <T = Body>(method: string, route: string, init: Parameters<typeof jsonRequest>[3] = {}) =>
      jsonRequest<T>(t.url, method, route, init);
    const upload = async (token: string, file: string) => {
      const up = await uploadFile(t.url, token, file);
      expect(up.status).toBe(201);
      return up.body as { id: string; serialNumber: string; sha256Hash: string };
    };

    /** Every version and delete marker of `key` in the bucket. */
    const versionsOf = async (key: string) => {
      const out = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: key }));
      return [...(out.Versions ?? []), ...(out.DeleteMarkers ?? [])].filter((v) => v.Key === key);
    };

    beforeAll(async () => {
      s3 = new S3Client({
        region: rgw.region,
        endpoint: rgw.endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey },
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
      });
      if (versioned) {
        await s3.send(new CreateBucketCommand({ Bucket: bucket }));
        await s3.send(
          new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }),
        );
      }
      t = await startTestService(kind, {
        S3_ENDPOINT: rgw.endpoint,
        S3_BUCKET: bucket,
        S3_REGION: rgw.region,
        S3_ACCESS_KEY_ID: rgw.accessKeyId,
        S3_SECRET_ACCESS_KEY: rgw.secretAccessKey,
      });
    });
    afterAll(async () => {
      await t?.close();
      s3?.destroy();
    });
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it('who may delete: the uploader, or an admin or owner of the organization; never another tenant', async () => {
      const [o, a, e1, e2, r] = ['owner', 'admin', 'editor', 'editor2', 'reader'].map(freshEmail) as [
        string,
        string,
        string,
        string,
        string,
      ];
      const org = await makeOrg(t, 'LGPD Org', [
        [o, 'owner'],
        [a, 'admin'],
        [e1, 'editor'],
        [e2, 'editor'],
        [r, 'reader'],
      ]);
      const tok = (who: string) => org.tokens[who] as string;
      const docs = [await upload(tok(e1), TXT), await upload(tok(e1), TXT), await upload(tok(e1), TXT)];
      const [d1, d2, d3] = docs as [(typeof docs)[0], (typeof docs)[0], (typeof docs)[0]];
      const outsider = await t.token(freshEmail('outsider'));

      expect((await req('DELETE', `/api/documents/${d1.id}`)).status).toBe(401);
      expect((await req('DELETE', `/api/documents/${d1.id}`, { token: outsider })).status).toBe(403);
      for (const who of [e2, r]) {
        const res = await req('DELETE', `/api/documents/${d1.id}`, { token: tok(who) });
        expect(res.status, who).toBe(403);
        expect(res.body.code).toBe('FORBIDDEN');
      }
      expect((await req('DELETE', `/api/documents/${randomUUID()}`, { token: tok(o) })).status).toBe(404);
      expect((await req('DELETE', '/api/documents/not-a-uuid', { token: tok(o) })).status).toBe(404);
      expect(
        (await req('DELETE', `/api/documents/${d1.id}?reason=${'x'.repeat(501)}`, { token: tok(o) })).status,
      ).toBe(400);

      const byUploader = await req('DELETE', `/api/documents/${d1.id}?reason=Pedido%20do%20titular`, {
        token: tok(e1),
      });
      expect(byUploader.status, JSON.stringify(byUploader.body)).toBe(200);
      expect((await req('DELETE', `/api/documents/${d2.id}`, { token: tok(a) })).status).toBe(200);
      expect((await req('DELETE', `/api/documents/${d3.id}`, { token: tok(o) })).status).toBe(200);

      const em = t.service.deps.db.fork();
      const trail = await em.find(
        DocumentDeletion,
        { tenant: org.tenantId },
        { orderBy: { deletedAt: 'asc' } },
      );
      expect(trail.map((d) => [d.document.id, d.deletedBy, d.deletedByEmail, d.role, d.reason])).toEqual([
        [d1.id, org.ids[e1], e1, 'editor', 'Pedido do titular'],
        [d2.id, org.ids[a], a, 'admin', null],
        [d3.id, org.ids[o], o, 'owner', null],
      ]);
      for (const d of trail) expect(d.ip).toMatch(/127\.0\.0\.1/);
      expect(
        (await req<{ documents: unknown[] }>('GET', '/api/documents', { token: tok(r) })).body.documents,
      ).toEqual([]);
    });

    it('the object leaves the bucket; hash, serial and anchors stay verifiable; lists, feed and shares let go', async () => {
      const email = freshEmail('titular');
      const userId = await t.operator({ command: 'user:create', email });
      const owner = await t.token(email);
      const doc = await upload(owner, PDF);
      const kept = await upload(owner, TXT);
      expect(doc.sha256Hash).toBe(await sha256sum(PDF));
      const em = t.service.deps.db.fork();
      const row = await em.findOneOrFail(Document, { id: doc.id });
      const key = row.storageKey as string;
      // Anchored already (anchoring is off in tests: the chain fields are set as the worker would).
      const anchors = {
        onchainStatus: 'registered' as const,
        onchainTxHash: `0x${'ab'.repeat(32)}`,
        onchainAttestationUid: `0x${'cd'.repeat(32)}`,
        stacksStatus: 'registered' as const,
        stacksTxId: 'ef'.repeat(32),
      };
      await em.nativeUpdate(Document, { id: doc.id }, anchors);

      // Shared in every way, published, and a download URL handed out before the deletion.
      const wallet = Wallet.createRandom();
      const policy = (body: Body) =>
        req<{ token?: string; policy: { id: string } }>('POST', `/api/documents/${doc.id}/access-policies`, {
          token: owner,
          body,
        });
      const link = (await policy({ kind: 'link' })).body.token as string;
      await policy({ kind: 'public' });
      await policy({ kind: 'wallet', addresses: [wallet.address] });
      await policy({ kind: 'email', addresses: [email] });
      const walletAccess = async () => {
        const message = walletAccessMessage({
          serviceUrl: t.url,
          address: wallet.address,
          documentId: doc.id,
        });
        return req('POST', `/access/wallet/${doc.id}`, {
          body: { address: wallet.address, message, signature: await wallet.signMessage(message) },
        });
      };
      const shared = await req<{ accessUrl: string }>('GET', `/share/${link}`);
      expect(shared.status).toBe(200);
      expect((await req('GET', `/access/public/${doc.id}`)).status).toBe(200);
      expect((await walletAccess()).status).toBe(200);
      const download = await req<{ downloadUrl: string }>('GET', `/api/documents/${doc.id}/download`, {
        token: owner,
      });
      expect((await fetch(download.body.downloadUrl)).status).toBe(200);
      expect(
        (
          await req('PATCH', `/api/documents/${doc.id}/publish`, {
            token: owner,
            body: { published: true, title: 'Exame' },
          })
        ).status,
      ).toBe(200);
      const acervo = (await req<{ token: string }>('POST', '/api/settings/acervo-token', { token: owner }))
        .body.token;
      const feed = () =>
        api<{ documents: { serialNumber: string }[]; total: number }>(t.url, '/api/public/acervo', {
          token: acervo,
        });
      expect((await feed()).body.total).toBe(1);
      expect(await t.service.deps.storage.exists(key)).toBe(true);
      expect(await storedKeys(t)).toContain(key);
      if (versioned) {
        // An older version under the same key (an operator's restore, a replicated write): it must go too.
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'an older copy' }));
        expect(await versionsOf(key)).toHaveLength(2);
        // A key that merely starts with this one is another object: it stays.
        await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${key}-sibling`, Body: 'not this one' }));
      }
      // The public verification answer is cached (60 s) on every instance: the deletion drops it.
      expect((await api(t.url, `/api/public/verify?hash=${doc.sha256Hash}`)).status).toBe(200);
      const invalidate = vi.spyOn(t.service.deps.verifyCache, 'invalidate');

      const deleted = await req('DELETE', `/api/documents/${doc.id}?reason=Art.%2018%20VI`, { token: owner });
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
      expect(deleted.body).toEqual({
        ok: true,
        documentId: doc.id,
        serialNumber: doc.serialNumber,
        sha256Hash: doc.sha256Hash,
        deletedAt: expect.any(String),
      });

      expect(invalidate).toHaveBeenCalledWith(doc.sha256Hash);
      // Gone from the bucket: the adapter's listing, a HEAD, every version, and a URL signed before.
      expect(await t.service.deps.storage.exists(key)).toBe(false);
      expect(await versionsOf(key)).toEqual([]);
      if (versioned) expect(await versionsOf(`${key}-sibling`)).toHaveLength(1);
      expect(await storedKeys(t)).not.toContain(key);
      expect(await storedKeys(t)).toContain(
        (await em.fork().findOneOrFail(Document, { id: kept.id })).storageKey,
      );
      for (const url of [download.body.downloadUrl, shared.body.accessUrl]) {
        const res = await fetch(url);
        expect(res.status).toBe(404);
        expect(await res.text()).toMatch(/NoSuchKey/);
      }

      // The record keeps its hash, serial and anchors; public verification still finds it.
      const after = await em.fork().findOneOrFail(Document, { id: doc.id });
      expect(after).toMatchObject({
        ...anchors,
        sha256Hash: doc.sha256Hash,
        serialNumber: doc.serialNumber,
        storageKey: null,
        published: false,
      });
      expect(after.deletedAt).toBeInstanceOf(Date);
      const verify = await api<{ found: boolean; document: Body }>(
        t.url,
        `/api/public/verify?hash=${doc.sha256Hash}`,
      );
      expect(verify.body).toEqual({
        found: true,
        document: {
          serialNumber: doc.serialNumber,
          sha256Hash: doc.sha256Hash,
          onchainStatus: 'registered',
          onchainTxHash: anchors.onchainTxHash,
          onchainAttestationUid: anchors.onchainAttestationUid,
          stacksStatus: 'registered',
          stacksTxId: anchors.stacksTxId,
          createdAt: expect.any(String),
        },
      });
      expect((await api(t.url, `/api/public/documents/${doc.serialNumber}`)).status).toBe(200);

      // Out of the list and the feed; download, view, publish, sharing and a second deletion: 410.
      const list = await req<{ documents: { id: string }[] }>('GET', '/api/documents', { token: owner });
      expect(list.body.documents.map((d) => d.id)).toEqual([kept.id]);
      expect((await feed()).body).toEqual({ documents: [], total: 0 });
      for (const [method, route, body] of [
        ['GET', `/api/documents/${doc.id}/download`, undefined],
        ['GET', `/api/documents/${doc.id}/view`, undefined],
        ['PATCH', `/api/documents/${doc.id}/publish`, { published: true }],
        ['PATCH', `/api/documents/${doc.id}/publish`, { published: false }],
        ['DELETE', `/api/documents/${doc.id}`, undefined],
        ['POST', `/api/documents/${doc.id}/access-policies`, { kind: 'link' }],
      ] as const) {
        const res = await req(method, route, { token: owner, body });
        expect(res.status, `${method} ${route}`).toBe(410);
        expect(res.body.code).toBe('GONE');
      }
      expect((await req('GET', `/share/${link}`)).status).toBe(410);
      expect((await req('GET', `/access/public/${doc.id}`)).status).toBe(410);
      expect((await walletAccess()).status).toBe(410);
      const emailRequest = await req('POST', `/access/email/${doc.id}/request`, { body: { email } });
      expect(emailRequest.status).toBe(200);
      const policies = await req<{ policies: { status: string }[] }>(
        'GET',
        `/api/documents/${doc.id}/access-policies`,
        {
          token: owner,
        },
      );
      expect(policies.body.policies.map((p) => p.status)).toEqual([
        'revoked',
        'revoked',
        'revoked',
        'revoked',
      ]);
      // The record of who received the file stays with its owner.
      expect(
        (await req<{ log: unknown[] }>('GET', `/access-log/${doc.id}`, { token: owner })).body.log,
      ).toHaveLength(3);

      const trail = await em.fork().findOneOrFail(DocumentDeletion, { document: doc.id });
      expect(trail).toMatchObject({
        deletedBy: userId,
        deletedByEmail: email,
        role: 'owner',
        reason: 'Art. 18 VI',
      });
      expect(trail.deletedAt.toISOString()).toBe(deleted.body.deletedAt);
    });

    it('a refused or failing request deletes nothing: bad reason, demoted uploader, storage down', async () => {
      const [o, e] = ['owner', 'editor'].map(freshEmail) as [string, string];
      const org = await makeOrg(t, 'LGPD Refusals', [
        [o, 'owner'],
        [e, 'editor'],
      ]);
      const tok = (who: string) => org.tokens[who] as string;
      const doc = await upload(tok(e), TXT);
      const original = await readFile(TXT);
      const stillThere = async (why: string) => {
        const row = await t.service.deps.db.fork().findOneOrFail(Document, { id: doc.id });
        expect(row.deletedAt, why).toBeNull();
        expect(await t.service.deps.db.fork().count(DocumentDeletion, { document: doc.id }), why).toBe(0);
        const download = await req<{ downloadUrl: string }>('GET', `/api/documents/${doc.id}/download`, {
          token: tok(o),
        });
        expect(download.status, why).toBe(200);
        const file = await fetch(download.body.downloadUrl);
        expect(file.status, why).toBe(200);
        expect(Buffer.from(await file.arrayBuffer()).equals(original), why).toBe(true);
        if (versioned) expect(await versionsOf(row.storageKey as string), why).toHaveLength(1);
      };
      const link = await req<{ token: string }>('POST', `/api/documents/${doc.id}/access-policies`, {
        token: tok(e),
        body: { kind: 'link' },
      });
      expect(link.status).toBe(201);

      // The reason is checked before any byte goes: too long, control characters, NUL.
      for (const reason of ['x'.repeat(501), 'bell\u0007', 'ansi \u001b[31mred', 'nul\u0000']) {
        const res = await req('DELETE', `/api/documents/${doc.id}?reason=${encodeURIComponent(reason)}`, {
          token: tok(e),
        });
        expect(res.status, JSON.stringify(reason)).toBe(400);
        expect(res.body.code).toBe('BAD_REQUEST');
        await stillThere(JSON.stringify(reason));
      }

      // The uploader demoted to reader may no longer delete; the owner still may.
      await t.operator({ command: 'member:add', org: org.slug, email: e, role: 'reader' });
      const demoted = await req('DELETE', `/api/documents/${doc.id}`, { token: tok(e) });
      expect(demoted.status).toBe(403);
      expect(demoted.body.code).toBe('FORBIDDEN');
      await stillThere('demoted uploader');

      // Object storage failing: 502, and the document, its policies and its bytes are as they were.
      vi.spyOn(t.service.deps.storage, 'delete').mockRejectedValueOnce(
        new AppError('BAD_GATEWAY', 'Object storage: delete failed (test)'),
      );
      const failed = await req('DELETE', `/api/documents/${doc.id}`, { token: tok(o) });
      expect(failed.status).toBe(502);
      await stillThere('storage down');
      expect((await req('GET', `/share/${link.body.token}`)).status).toBe(200);

      // A retry deletes it.
      expect((await req('DELETE', `/api/documents/${doc.id}`, { token: tok(o) })).status).toBe(200);
      expect((await req('GET', `/share/${link.body.token}`)).status).toBe(410);
    });

    it('two deletions at once: one deletes, the other answers 410; one audit entry', async () => {
      const owner = await t.token(freshEmail('racer'));
      const doc = await upload(owner, TXT);
      const results = await Promise.all([
        req('DELETE', `/api/documents/${doc.id}`, { token: owner }),
        req('DELETE', `/api/documents/${doc.id}`, { token: owner }),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual([200, 410]);
      expect(await t.service.deps.db.fork().count(DocumentDeletion, { document: doc.id })).toBe(1);
    });
  });
});
