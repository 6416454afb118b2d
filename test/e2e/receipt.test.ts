import { createHash, randomBytes } from 'node:crypto';
import { loadConfig } from '@notary/server/config';
import { Document } from '@notary/server/db/entities';
import { buildReceipt } from '@notary/server/domain/documents/receipt';
import { EAS_SCHEMA, EAS_SCHEMA_UID } from '@notary/server/ports/chains';
import type { DocumentDto } from '@notary/shared';
import { parseReceipt, type Receipt } from '@notary/verify/receipt';
import { JsonRpcProvider, Network } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uploadBytes, waitRegistered } from '../harness/anchored';
import { api } from '../harness/http';
import { createTestPki, type TestPki } from '../harness/pki';
import { startTestService, type TestService } from '../harness/service';
import { startTestTsa, type TestTsa } from '../harness/tsa';

/**
 * The receipt end to end: `GET /api/documents/:id/receipt` on the real service anchoring on the devnets, compared with
 * what the chains and the database hold.
 */
describe('GET /api/documents/:id/receipt (devnet anchoring, loopback TSA)', () => {
  let pki: TestPki;
  let tsa: TestTsa;
  let t: TestService;
  let token: string;
  let otherToken: string;
  let doc: DocumentDto;

  beforeAll(async () => {
    pki = await createTestPki();
    tsa = await startTestTsa(pki);
    t = await startTestService('pglite', {
      ANCHORING: 'devnet',
      TSA_URL: tsa.url,
      TSA_CA_CERTS: pki.caChainPath,
      SERVICE_NAME: 'Notary Test',
    });
    token = await t.token('receipt@example.com');
    otherToken = await t.token('stranger@example.com');
    doc = await waitRegistered(t, token, (await uploadBytes(t, token, randomBytes(700), 'one.bin')).id);
  });

  afterAll(async () => {
    await t?.close();
    await tsa?.stop();
    await pki?.dispose();
  });

  it('states the file, its proof and both anchors as the chains hold them', async () => {
    const res = await api<Receipt>(t.url, `/api/documents/${doc.id}/receipt`, { token });
    expect(res.status).toBe(200);
    const receipt = parseReceipt(res.body);
    const devnets = t.service.anchoring?.devnets;
    if (!devnets) throw new Error('no devnets');
    expect(receipt).toMatchObject({
      format: 'notary-receipt',
      // Its batch anchored the log's checkpoint: version 4 (`transparencyLog.anchored`).
      version: 4,
      service: { name: 'Notary Test', url: t.service.deps.publicUrl },
      document: {
        id: doc.id,
        serialNumber: doc.serialNumber,
        sha256: doc.sha256Hash,
        fileName: 'one.bin',
        fileSize: 700,
        mimeType: doc.mimeType,
        registeredAt: doc.createdAt,
      },
      timestamp: null,
    });
    // Uploaded alone: the batch is the document and, as its last leaf, the log's checkpoint at the cut.
    expect(receipt.merkle).toMatchObject({
      hashing: 'sha256-rfc6962',
      leafIndex: 0,
      leafCount: 2,
      siblings: [{ position: 'right' }],
    });
    expect(receipt.transparencyLog?.anchored).toMatchObject({
      batchRoot: receipt.merkle?.root,
      leafIndex: 1,
      // Its sibling: the document's leaf hash, SHA-256(0x00 || sha256).
      siblings: [
        {
          position: 'left',
          hash: createHash('sha256')
            .update(Buffer.concat([Buffer.of(0), Buffer.from(doc.sha256Hash, 'hex')]))
            .digest('hex'),
        },
      ],
    });
    if (receipt.evm?.status !== 'registered' || receipt.stacks?.status !== 'registered') {
      throw new Error(`legs not registered: ${JSON.stringify(receipt)}`);
    }
    expect(receipt.evm).toMatchObject({
      network: 'hardhat',
      chainId: 31337,
      easAddress: devnets.evm.easAddress,
      schemaRegistryAddress: devnets.evm.schemaRegistryAddress,
      schema: EAS_SCHEMA,
      schemaUid: EAS_SCHEMA_UID,
      attestationUid: doc.onchainAttestationUid,
      attester: devnets.evm.funderAddress,
      txHash: doc.onchainTxHash,
      anchoredAt: doc.onchainAt,
    });
    const provider = new JsonRpcProvider(devnets.evm.rpcUrl, Network.from(devnets.evm.chainId), {
      staticNetwork: true,
      cacheTimeout: -1,
    });
    try {
      const txReceipt = await provider.getTransactionReceipt(receipt.evm.txHash);
      expect(txReceipt?.blockNumber).toBe(receipt.evm.blockNumber);
      expect(txReceipt?.from).toBe(receipt.evm.attester);
    } finally {
      provider.destroy();
    }
    expect(receipt.stacks).toMatchObject({
      network: 'devnet',
      contractId: devnets.stacks.contractId,
      txId: `0x${doc.stacksTxId}`,
      anchoredAt: doc.stacksAnchoredAt,
    });
    const tx = (await (
      await fetch(`${devnets.stacks.url}/extended/v1/tx/${receipt.stacks.txId}`)
    ).json()) as {
      block_height: number;
    };
    expect(tx.block_height).toBe(receipt.stacks.blockHeight);
  });

  it('carries the first RFC 3161 token issued over the hash, and is the same JSON on every call', async () => {
    const stamped = await fetch(`${t.url}/api/documents/${doc.id}/timestamp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(stamped.status).toBe(200);
    const first = await api<Receipt>(t.url, `/api/documents/${doc.id}/receipt`, { token });
    const timestamp = first.body.timestamp;
    if (!timestamp) throw new Error('no timestamp in the receipt');
    expect(Date.parse(timestamp.genTime)).not.toBeNaN();
    // The token is the one inside the .tsr the route answered (a DER TimeStampResp ends with it).
    const tsr = Buffer.from(await stamped.arrayBuffer());
    expect(tsr.subarray(tsr.length - Buffer.from(timestamp.token, 'base64').length)).toEqual(
      Buffer.from(timestamp.token, 'base64'),
    );
    // A second token does not replace the first.
    await fetch(`${t.url}/api/documents/${doc.id}/timestamp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
    });
    const again = await api<Receipt>(t.url, `/api/documents/${doc.id}/receipt`, { token });
    expect(again.body).toEqual(first.body);
  });

  it('refuses another tenant (403), no session (401), an unknown document (404)', async () => {
    expect((await api(t.url, `/api/documents/${doc.id}/receipt`, { token: otherToken })).status).toBe(403);
    expect((await api(t.url, `/api/documents/${doc.id}/receipt`)).status).toBe(401);
    const unknown = `/api/documents/${crypto.randomUUID()}/receipt`;
    expect((await api(t.url, unknown, { token })).status).toBe(404);
  });

  it('is in the OpenAPI document', async () => {
    const spec = await api<{ paths: Record<string, { get?: unknown }> }>(t.url, '/api/openapi.json');
    expect(spec.body.paths['/api/documents/{id}/receipt']?.get).toBeDefined();
  });
});

describe('receipt of a document not anchored yet', () => {
  let t: TestService;

  beforeAll(async () => {
    t = await startTestService('pglite');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('says pending on each configured leg, with no proof and no transaction', async () => {
    const token = await t.token('pending@example.com');
    const uploaded = await uploadBytes(t, token, randomBytes(100), 'pending.bin');
    const em = t.service.deps.db.fork();
    const row = await em.findOneOrFail(Document, { id: uploaded.id });
    // Anchoring off: no leg at all.
    const off = await buildReceipt(em, { config: t.service.deps.config, publicUrl: 'http://x' }, row);
    expect(off).toMatchObject({ merkle: null, evm: null, stacks: null, timestamp: null });
    // The devnet configuration (nothing ran yet): both legs pending on the devnet's contracts.
    const devnet = loadConfig({ NODE_ENV: 'test', ANCHORING: 'devnet', DATA_DIR: t.dataDir });
    const pending = await buildReceipt(em, { config: devnet, publicUrl: 'http://x' }, row);
    expect(pending.evm).toEqual({
      status: 'pending',
      network: 'hardhat',
      chainId: 31337,
      schema: EAS_SCHEMA,
      schemaUid: EAS_SCHEMA_UID,
      easAddress: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
      schemaRegistryAddress: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    });
    expect(pending.stacks).toEqual({ status: 'pending', network: 'devnet', contractId: null });
    expect(pending.merkle).toBeNull();
  });
});
