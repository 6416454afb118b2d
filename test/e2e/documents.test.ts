import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { DocumentSchema, PublicDocumentSchema } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES_DIR, fixtureFiles, sha256sum } from '../harness/fixtures';
import { api, uploadFile } from '../harness/http';
import { DATABASE_KINDS, startTestService, storedKeys, type TestService } from '../harness/service';

describe.each(DATABASE_KINDS)('documents on %s', (kind) => {
  let t: TestService;
  let alice: string;
  let bob: string;
  const uploaded = new Map<
    string,
    { id: string; serialNumber: string; sha256Hash: string; mimeType: string }
  >();

  beforeAll(async () => {
    t = await startTestService(kind);
    alice = await t.token('alice@example.com');
    bob = await t.token('bob@example.com');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('uploads every fixture; hash equals sha256sum; verifies by hash and serial; download returns the bytes', async () => {
    const files = await fixtureFiles();
    expect(files.length).toBeGreaterThan(30);
    for (const file of files) {
      const res = await uploadFile(t.url, alice, file);
      expect(res.status, `${path.basename(file)}: ${JSON.stringify(res.body)}`).toBe(201);
      const doc = DocumentSchema.parse(res.body);
      expect(doc.sha256Hash).toBe(await sha256sum(file));
      expect(doc.fileName).toBe(path.basename(file));
      expect(doc.fileSize).toBe((await readFile(file)).length);
      expect(doc).toMatchObject({
        onchainStatus: 'pending',
        stacksStatus: 'pending',
        consentGiven: true,
        sourceType: 'upload',
      });
      expect(doc.serialNumber).toMatch(/^U[0-9A-Z]{5}-[0-9A-HJKMNP-TV-Z]{10}$/);
      uploaded.set(path.basename(file), doc);

      const verify = await api<{ found: boolean; document: unknown }>(
        t.url,
        `/api/public/verify?hash=${doc.sha256Hash}`,
      );
      expect(verify.status).toBe(200);
      expect(verify.body.found).toBe(true);
      const projection = PublicDocumentSchema.parse(verify.body.document);
      // The first upload of identical bytes is the record (fixtures contain no duplicates).
      expect(projection.serialNumber).toBe(doc.serialNumber);

      const bySerial = await api(t.url, `/api/public/documents/${doc.serialNumber.toLowerCase()}`);
      expect(bySerial.status).toBe(200);
      expect(Object.keys(bySerial.body as object).sort()).toEqual([
        'createdAt',
        'onchainAttestationUid',
        'onchainStatus',
        'onchainTxHash',
        'serialNumber',
        'sha256Hash',
        'stacksStatus',
        'stacksTxId',
      ]);

      const dl = await api<{ downloadUrl: string; sha256: string; expiresInSeconds: number }>(
        t.url,
        `/api/documents/${doc.id}/download`,
        { token: alice },
      );
      expect(dl.status).toBe(200);
      expect(dl.body.expiresInSeconds).toBe(300);
      expect(dl.body.sha256).toBe(doc.sha256Hash);
      const bytes = await fetch(dl.body.downloadUrl);
      expect(bytes.status).toBe(200);
      expect(bytes.headers.get('content-type')).toBe('application/octet-stream');
      expect(bytes.headers.get('content-disposition')).toMatch(/^attachment/);
      expect(Buffer.from(await bytes.arrayBuffer()).equals(await readFile(file))).toBe(true);
    }
  });

  it('lists the tenant documents newest first and reads one', async () => {
    const list = await api<{ documents: { id: string; createdAt: string }[] }>(t.url, '/api/documents', {
      token: alice,
    });
    expect(list.status).toBe(200);
    expect(list.body.documents.length).toBe(uploaded.size);
    const times = list.body.documents.map((d) => d.createdAt);
    expect([...times].sort().reverse()).toEqual(times);
    const first = list.body.documents[0];
    const one = await api<{ document: { id: string } }>(t.url, `/api/documents/${first?.id}`, {
      token: alice,
    });
    expect(one.status).toBe(200);
    expect(one.body.document.id).toBe(first?.id);
    expect(
      (await api<{ documents: unknown[] }>(t.url, '/api/documents', { token: bob })).body.documents,
    ).toEqual([]);
  });

  it('view: PDF, PNG and text inline with their real type; SVG, HTML and unknown forced to attachment', async () => {
    const cases: [string, boolean, string][] = [
      ['tracemonkey.pdf', true, 'application/pdf'],
      ['diagram.png', true, 'image/png'],
      ['contrato.txt', true, 'text/plain; charset=utf-8'],
      ['evil.svg', false, 'application/octet-stream'],
      ['evil.html', false, 'application/octet-stream'],
      ['bundle.zip', false, 'application/octet-stream'],
    ];
    for (const [name, inline, type] of cases) {
      const doc = uploaded.get(name);
      const view = await api<{ viewUrl: string; inline: boolean; expiresInSeconds: number }>(
        t.url,
        `/api/documents/${doc?.id}/view`,
        { token: alice },
      );
      expect(view.status, name).toBe(200);
      expect(view.body.inline, name).toBe(inline);
      expect(view.body.expiresInSeconds).toBe(300);
      const res = await fetch(view.body.viewUrl);
      expect(res.headers.get('content-type'), name).toBe(type);
      expect(res.headers.get('content-disposition'), name).toMatch(inline ? /^inline/ : /^attachment/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('hash comparison matches the stored hash, case-insensitively, and rejects a malformed hash', async () => {
    const doc = uploaded.get('contrato.txt');
    const same = await api<{ hashMatches: boolean }>(
      t.url,
      `/api/documents/${doc?.id}/verify?hash=${doc?.sha256Hash.toUpperCase()}`,
      {
        token: alice,
      },
    );
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({
      documentId: doc?.id,
      serialNumber: doc?.serialNumber,
      hashMatches: true,
      storedHash: doc?.sha256Hash,
    });
    const other = await api<{ hashMatches: boolean }>(
      t.url,
      `/api/documents/${doc?.id}/verify?hash=${'0'.repeat(64)}`,
      { token: alice },
    );
    expect(other.body.hashMatches).toBe(false);
    expect((await api(t.url, `/api/documents/${doc?.id}/verify?hash=xyz`, { token: alice })).status).toBe(
      400,
    );
  });

  it("tenancy: another user cannot read, download, view or verify Alice's document (403); unknown is 404", async () => {
    const doc = uploaded.get('contrato.txt');
    for (const suffix of ['', '/download', '/view', `/verify?hash=${doc?.sha256Hash}`]) {
      const res = await api<{ code: string }>(t.url, `/api/documents/${doc?.id}${suffix}`, { token: bob });
      expect(res.status, suffix).toBe(403);
      expect(res.body.code).toBe('FORBIDDEN');
    }
    const trpc = await fetch(
      `${t.url}/trpc/documents.get?input=${encodeURIComponent(JSON.stringify({ id: doc?.id }))}`,
      {
        headers: { authorization: `Bearer ${bob}` },
      },
    );
    expect(trpc.status).toBe(403);
    expect((await api(t.url, `/api/documents/${crypto.randomUUID()}`, { token: alice })).status).toBe(404);
    expect((await api(t.url, '/api/documents/not-a-uuid', { token: alice })).status).toBe(404);
  });

  it('authentication: no token or a bad token is 401 on every document route', async () => {
    for (const route of ['/api/documents', `/api/documents/${crypto.randomUUID()}`]) {
      expect((await api(t.url, route)).status).toBe(401);
      expect((await api(t.url, route, { token: 'not.a.jwt' })).status).toBe(401);
    }
    const res = await uploadFile(t.url, 'garbage', path.join(FIXTURES_DIR, 'files/contrato.txt'));
    expect(res.status).toBe(401);
  });

  it('upload rejects a missing file or consent with 400 and stores nothing', async () => {
    const before = (await api<{ documents: unknown[] }>(t.url, '/api/documents', { token: bob })).body
      .documents.length;
    const file = path.join(FIXTURES_DIR, 'files/contrato.txt');
    const variants: Record<string, string>[] = [{}, { consent: 'false' }, { consent: 'yes' }];
    for (const fields of variants) {
      const res = await uploadFile(t.url, bob, file, fields);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('BAD_REQUEST');
    }
    const form = new FormData();
    form.set('consent', 'true');
    const noFile = await fetch(`${t.url}/api/documents/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${bob}` },
      body: form,
    });
    expect(noFile.status).toBe(400);
    expect(
      (await api<{ documents: unknown[] }>(t.url, '/api/documents', { token: bob })).body.documents.length,
    ).toBe(before);
    expect(await storedKeys(t)).toHaveLength(uploaded.size);
  });

  it('public verify: 400 on a malformed hash, found:false for an unknown one; serial: 400 malformed, 404 unknown', async () => {
    expect((await api(t.url, '/api/public/verify?hash=abc')).status).toBe(400);
    expect((await api(t.url, '/api/public/verify')).status).toBe(400);
    const unknown = await api(t.url, `/api/public/verify?hash=${'a'.repeat(64)}`);
    expect(unknown).toMatchObject({ status: 200, body: { found: false } });
    expect((await api(t.url, '/api/public/documents/not-a-serial')).status).toBe(400);
    expect((await api(t.url, '/api/public/documents/ZZ-0000000000')).status).toBe(404);
  });

  it('health, on-chain info and the OpenAPI document', async () => {
    const health = await api<{ status: string; timestamp: string }>(t.url, '/health');
    expect(health.body.status).toBe('ok');
    expect(Number.isNaN(Date.parse(health.body.timestamp))).toBe(false);
    const info = await api<Record<string, unknown>>(t.url, '/api/onchain/info');
    expect(info.body).toMatchObject({ enabled: false, stacksEnabled: false });
    const doc = await api<{ openapi: string; paths: Record<string, unknown> }>(t.url, '/api/openapi.json');
    expect(doc.body.openapi).toMatch(/^3\.1/);
    for (const p of [
      '/api/documents/upload',
      '/api/documents/{id}/download',
      '/api/public/verify',
      '/api/public/documents/{serial}',
      '/health',
    ]) {
      expect(doc.body.paths).toHaveProperty([p]);
    }
  });
});
