import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { merkleProofHolds } from '@notary/verify/merkle';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SeededDocument, type SeedResult, seed } from '../bench/seed';
import { request } from '../harness/http';
import { createTestDatabase } from '../harness/postgres';
import { DATABASE_KINDS, startTestService, type TestService } from '../harness/service';

/**
 * The archive `npm run bench -- seed` writes is one the real service serves as its user's: a service started
 * on the seeded database lists the documents, verifies them by hash and serial, serves their receipts (whose
 * Merkle proofs hold) and treats an LGPD-deleted one as deleted. 2,000 documents with a fixed `--seed`, on
 * PostgreSQL and on PGlite.
 */
const EMAIL = 'tabeliao@example.com';
const DOCUMENTS = 2000;

interface ListedDocument {
  id: string;
  serialNumber: string;
  createdAt: string;
}

describe.each(DATABASE_KINDS)('a seeded archive on %s', (kind) => {
  let t: TestService;
  let seeded: SeedResult;
  let dataDir: string;
  let dropDatabase: (() => Promise<void>) | undefined;
  let token: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-seed-test-'));
    const database = kind === 'postgresql' ? await createTestDatabase() : undefined;
    dropDatabase = database?.drop;
    const env: Record<string, string> = {
      NODE_ENV: 'test',
      DATA_DIR: dataDir,
      ...(database ? { DATABASE_URL: database.url } : {}),
    };
    seeded = await seed({
      documents: DOCUMENTS,
      email: EMAIL,
      seed: 'seed-test',
      chunk: 500,
      env: { ...process.env, ...env },
      log: () => undefined,
    });
    t = await startTestService(kind, env);
    token = await t.token(EMAIL);
  }, 300_000);

  afterAll(async () => {
    await t?.close();
    await dropDatabase?.();
    await rm(dataDir, { recursive: true, force: true });
  });

  // Not a PDF: the receipt of a stored PDF reads the object (original signatures), and the seed is rows only.
  const live = (): SeededDocument => {
    const doc = seeded.samples.find((s) => !s.deleted && s.anchored && s.mimeType !== 'application/pdf');
    if (!doc) throw new Error('no live anchored sample');
    return doc;
  };

  it('writes every document with its anchoring, sharing and deletion rows', () => {
    expect(seeded.documents).toBe(DOCUMENTS);
    expect(seeded.batches).toBeGreaterThan(0);
    expect(seeded.deleted).toBeGreaterThan(0);
    expect(seeded.published).toBeGreaterThan(0);
    expect(seeded.policies).toBeGreaterThan(0);
    expect(seeded.samples.some((s) => s.deleted)).toBe(true);
    for (const s of seeded.samples)
      expect(s.serialNumber).toMatch(new RegExp(`^${seeded.serialPrefix}-[0-9A-Z]{10}$`));
  });

  it("lists the seeded documents, newest first, as the user's", async () => {
    const res = await request<ListedDocument[] | { documents: ListedDocument[] }>(
      t,
      'GET',
      '/api/documents',
      {
        token,
      },
    );
    expect(res.status).toBe(200);
    const docs = Array.isArray(res.body) ? res.body : res.body.documents;
    expect(docs.length).toBeGreaterThan(0);
    for (const d of docs) expect(d.serialNumber.startsWith(`${seeded.serialPrefix}-`)).toBe(true);
    const times = docs.map((d) => Date.parse(d.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const deleted = seeded.samples.filter((s) => s.deleted).map((s) => s.id);
    expect(docs.filter((d) => deleted.includes(d.id))).toEqual([]);
    const one = await request(t, 'GET', `/api/documents/${live().id}`, { token });
    expect(one).toMatchObject({ status: 200, body: { document: { serialNumber: live().serialNumber } } });
  });

  it('verifies a seeded document by hash and by serial, and an LGPD-deleted one still by hash', async () => {
    const doc = live();
    const byHash = await request(t, 'GET', `/api/public/verify?hash=${doc.sha256Hash}`);
    expect(byHash).toMatchObject({
      status: 200,
      body: { found: true, document: { serialNumber: doc.serialNumber } },
    });
    const bySerial = await request(t, 'GET', `/api/public/documents/${doc.serialNumber}`);
    expect(bySerial).toMatchObject({ status: 200, body: { serialNumber: doc.serialNumber } });
    const gone = seeded.samples.find((s) => s.deleted) as SeededDocument;
    const deletedByHash = await request(t, 'GET', `/api/public/verify?hash=${gone.sha256Hash}`);
    expect(deletedByHash).toMatchObject({ status: 200, body: { found: true } });
    expect((await request(t, 'GET', `/api/documents/${gone.id}/download`, { token })).status).toBe(410);
  });

  it('serves a receipt whose Merkle proof leads to its batch root, registered on both chains', async () => {
    const doc = live();
    const res = await request<{
      document: { sha256: string };
      merkle: { root: string; siblings: { position: 'left' | 'right'; hash: string }[] };
      evm: { status: string };
      stacks: { status: string };
    }>(t, 'GET', `/api/documents/${doc.id}/receipt`, { token });
    expect(res.status).toBe(200);
    expect(res.body.document.sha256).toBe(doc.sha256Hash);
    expect(await merkleProofHolds(doc.sha256Hash, res.body.merkle, res.body.merkle.root)).toBe(true);
    expect(res.body.evm.status).toBe('registered');
    expect(res.body.stacks.status).toBe('registered');
  });

  it("keeps the tenant's storage counter equal to its documents' bytes", async () => {
    if (seeded.usedBytes === null) return;
    expect(seeded.usedBytes).toBeGreaterThan(0);
    const out = await t.operator({ command: 'storage:recount' });
    expect(out).toMatch(/^drifted\t0$/m);
  });
});

describe('the seed refuses a real archive', () => {
  it('refuses NODE_ENV=production and configured chains before it opens anything', async () => {
    const dataDir = path.join(os.tmpdir(), 'notary-seed-never-created');
    await expect(
      seed({ documents: 1, email: 'x@example.com', env: { NODE_ENV: 'production', DATA_DIR: dataDir } }),
    ).rejects.toThrow(/NODE_ENV=production/);
    await expect(
      seed({
        documents: 1,
        email: 'x@example.com',
        env: { NODE_ENV: 'test', DATA_DIR: dataDir, EVM_RPC_URL: 'http://127.0.0.1:9/' },
      }),
    ).rejects.toThrow(/real networks/);
  });
});
