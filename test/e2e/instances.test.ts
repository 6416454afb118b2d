import { createHash, randomBytes } from 'node:crypto';
import { type HardhatDevnet, startHardhatDevnet } from '@notary/server/adapters/chains/hardhat-devnet';
import { AnchorBatch, AnchorTx, Document, DocumentAnchor } from '@notary/server/db/entities';
import type { DocumentDto } from '@notary/shared';
import { id as eventTopic, JsonRpcProvider } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, jsonRequest } from '../harness/http';
import { createTestDatabase } from '../harness/postgres';
import { type RadosgwServer, radosgwAvailable, startRadosgw } from '../harness/radosgw';
import { startTestService, type TestService } from '../harness/service';
import { freshEmail } from '../harness/tenants';

const randomIp = () => `10.${randomBytes(3).join('.')}`;

/** Uploads `content` as a small text file; returns the 201 Document. */
async function upload(base: string, token: string, content: string, name: string): Promise<DocumentDto> {
  const form = new FormData();
  form.set('consent', 'true');
  form.set('file', new Blob([content]), name);
  const res = await fetch(`${base}/api/documents/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  expect(res.status).toBe(201);
  return (await res.json()) as DocumentDto;
}

/**
 * Two instances of the service behind no balancer (the test alternates between them), on one PostgreSQL
 * database, one S3 bucket (radosgw), one Redis and one EVM chain: what several instances in production share.
 */
describe.skipIf(!radosgwAvailable())('two instances on one database, bucket, Redis and chain', () => {
  let rgw: RadosgwServer;
  let chain: HardhatDevnet;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let a: TestService;
  let b: TestService;
  let token: string;

  beforeAll(async () => {
    [rgw, chain, database] = await Promise.all([startRadosgw(), startHardhatDevnet(), createTestDatabase()]);
    const env = {
      DATABASE_URL: database.url,
      // Every instance names itself the same and shares the secret (docs/deployment.md, Several instances).
      PUBLIC_URL: 'http://notary.test',
      SECRET: randomBytes(32).toString('hex'),
      S3_ENDPOINT: rgw.endpoint,
      S3_BUCKET: `notary-instances-${randomBytes(4).toString('hex')}`,
      S3_REGION: rgw.region,
      S3_ACCESS_KEY_ID: rgw.accessKeyId,
      S3_SECRET_ACCESS_KEY: rgw.secretAccessKey,
      REDIS_URL: 'redis://127.0.0.1:6379',
      RATE_LIMITS: 'on',
      ANCHORING: 'configured',
      ANCHOR_BATCH_SECONDS: '1',
      EVM_RPC_URL: chain.rpcUrl,
      EVM_PRIVATE_KEY: chain.funderPrivateKey,
      EVM_CHAIN_ID: String(chain.chainId),
      EVM_NETWORK: 'shared-testnet',
      EAS_ADDRESS: chain.easAddress,
      EAS_SCHEMA_REGISTRY_ADDRESS: chain.schemaRegistryAddress,
      EVM_CONFIRMATIONS: '1',
    };
    a = await startTestService('postgresql', env);
    b = await startTestService('postgresql', env);
    token = await a.token(freshEmail('two'));
  });

  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
    await chain?.stop();
    await rgw?.stop();
  });

  it('uploads on both, verification on both, each batch anchored once', async () => {
    const docs: DocumentDto[] = [];
    for (let i = 0; i < 8; i++) {
      const on = i % 2 ? b : a;
      docs.push(
        await upload(on.url, token, `instance document ${i} ${randomBytes(8).toString('hex')}`, `d${i}.txt`),
      );
    }
    expect(new Set(docs.map((d) => d.serialNumber)).size).toBe(docs.length);
    for (const doc of docs) {
      for (const on of [a, b]) {
        const res = await api<{ found: boolean; document: { serialNumber: string } }>(
          on.url,
          `/api/public/verify?hash=${doc.sha256Hash}`,
          { headers: { 'x-forwarded-for': randomIp() } },
        );
        expect(res.body).toMatchObject({ found: true, document: { serialNumber: doc.serialNumber } });
      }
    }

    // Wait for anchoring (either instance's worker may do it), read from the shared database.
    const ids = docs.map((d) => d.id);
    const deadline = Date.now() + 90_000;
    while (
      (await a.service.deps.db.fork().count(Document, { id: { $in: ids }, onchainStatus: 'registered' })) <
      ids.length
    ) {
      if (Date.now() > deadline) throw new Error('documents not anchored in time');
      await new Promise((r) => setTimeout(r, 250));
    }
    // Both instances answer with the anchored state.
    for (const on of [a, b]) {
      const list = await api<{ documents: DocumentDto[] }>(on.url, '/api/documents', { token });
      expect(list.body.documents.filter((d) => d.onchainStatus === 'registered')).toHaveLength(docs.length);
    }
    const em = a.service.deps.db.fork();
    const anchors = await em.find(DocumentAnchor, { document: { $in: docs.map((d) => d.id) } });
    expect(anchors).toHaveLength(docs.length);
    const batchIds = [...new Set(anchors.map((x) => x.batch.id))];
    const txs = await em.find(AnchorTx, { batch: { $in: batchIds }, chain: 'evm' });
    // One transaction per batch and chain, and on the chain exactly one attestation per batch: no instance
    // anchored a batch the other had taken.
    expect(txs).toHaveLength(batchIds.length);
    expect(await em.count(AnchorBatch, { id: { $in: batchIds } })).toBe(batchIds.length);
    const provider = new JsonRpcProvider(chain.rpcUrl, undefined, { cacheTimeout: -1 });
    const logs = await provider.getLogs({
      address: chain.easAddress,
      topics: [eventTopic('Attested(address,address,bytes32,bytes32)')],
      fromBlock: 0,
    });
    expect(logs).toHaveLength(batchIds.length);
    expect(new Set(txs.map((t) => t.txHash)).size).toBe(txs.length);
    provider.destroy();
  });

  it('one rate limit budget: 15 verifications on each, the 31st on either is 429', async () => {
    const ip = randomIp();
    const verify = (on: TestService) =>
      api(on.url, `/api/public/verify?hash=${randomBytes(32).toString('hex')}`, {
        headers: { 'x-forwarded-for': ip },
      });
    for (let i = 0; i < 15; i++) {
      expect((await verify(a)).status).toBe(200);
      expect((await verify(b)).status).toBe(200);
    }
    expect((await verify(a)).status).toBe(429);
    expect((await verify(b)).status).toBe(429);
  });

  it('a file recorded on one instance is found on the other, which had just answered that it was unknown', async () => {
    const content = `asked before it exists ${randomBytes(8).toString('hex')}`;
    const hash = createHash('sha256').update(content).digest('hex');
    const verifyOn = async (on: TestService) =>
      (
        await api<{ found: boolean }>(on.url, `/api/public/verify?hash=${hash}`, {
          headers: { 'x-forwarded-for': randomIp() },
        })
      ).body.found;
    // B answers unknown and keeps that answer (10 s); the upload on A drops it over Redis.
    expect(await verifyOn(b)).toBe(false);
    expect(await verifyOn(b)).toBe(false);
    await upload(a.url, token, content, 'asked.txt');
    expect(await verifyOn(a)).toBe(true);
    // Well under the 10 s the unknown answer is kept: only the invalidation can make B read again in time.
    const deadline = Date.now() + 5_000;
    while (!(await verifyOn(b))) {
      if (Date.now() > deadline)
        throw new Error('instance B still answers that the recorded file is unknown');
      await new Promise((r) => setTimeout(r, 50));
    }
  });

  it('a change on one instance reaches the other instance’s acervo cache at once', async () => {
    const tokenRes = await jsonRequest<{ token: string }>(a.url, 'POST', '/api/settings/acervo-token', {
      token,
    });
    expect(tokenRes.status).toBe(201);
    const feedOn = async (on: TestService) =>
      (
        await api<{ total: number }>(on.url, '/api/public/acervo', {
          token: tokenRes.body.token,
          headers: { 'x-forwarded-for': randomIp() },
        })
      ).body.total;
    const before = await feedOn(b);
    expect(await feedOn(b)).toBe(before);
    const doc = await upload(a.url, token, `published ${randomBytes(8).toString('hex')}`, 'published.txt');
    const published = await jsonRequest(a.url, 'PATCH', `/api/documents/${doc.id}/publish`, {
      token,
      body: { published: true },
    });
    expect(published.status).toBe(200);
    // B cached the page before the publication; the invalidation over Redis makes it read again.
    const deadline = Date.now() + 10_000;
    while ((await feedOn(b)) !== before + 1) {
      if (Date.now() > deadline) throw new Error('instance B still serves the old acervo page');
      await new Promise((r) => setTimeout(r, 50));
    }
  });
});
