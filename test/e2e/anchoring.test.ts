import { createHash, randomBytes } from 'node:crypto';
import { easAbi } from '@notary/server/adapters/chains/eas-abi';
import { StacksNotaryChain } from '@notary/server/adapters/chains/stacks';
import { hashFromHex, type MerkleProof, verifyMerkleProof } from '@notary/server/domain/anchoring/merkle';
import type { DocumentDto, OnchainInfoDto, PublicDocumentDto } from '@notary/shared';
import { AbiCoder, Contract, JsonRpcProvider, Network } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../harness/http';
import { DATABASE_KINDS, startTestService, type TestService } from '../harness/service';

/**
 * Anchoring end to end: the real service with `ANCHORING=devnet` (in-process Hardhat with the EAS contracts and the
 * Clarity-VM Stacks node), documents uploaded over HTTP.
 */

interface AnchorProofBody {
  batchId: string | null;
  root: string | null;
  batchSize: number | null;
  proof: MerkleProof | null;
}

/** Uploads `bytes` as a file through `POST /api/documents/upload`; returns the created Document. */
async function upload(t: TestService, token: string, bytes: Uint8Array, name: string): Promise<DocumentDto> {
  const form = new FormData();
  form.set('consent', 'true');
  form.set('file', new Blob([bytes]), name);
  const res = await fetch(`${t.url}/api/documents/upload`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  expect(res.status).toBe(201);
  return (await res.json()) as DocumentDto;
}

function registered(d: DocumentDto): boolean {
  return d.onchainStatus === 'registered' && d.stacksStatus === 'registered';
}

/** Polls `GET /api/documents/:id` until the document is registered on both chains (or `timeoutMs`). */
async function waitRegistered(t: TestService, token: string, id: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await api<{ document: DocumentDto }>(t.url, `/api/documents/${id}`, { token });
    if (registered(res.body.document)) return res.body.document;
    if (Date.now() > deadline) throw new Error(`not registered in time: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Polls the database until no document of the service is pending on either chain (or `timeoutMs`). */
async function waitAllRegistered(t: TestService, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const rows: { n: string | number }[] = await t.service.deps.db
      .fork()
      .getConnection()
      .execute(
        `select count(*) as n from document where onchain_status = 'pending' or stacks_status = 'pending'`,
      );
    if (Number(rows[0]?.n) === 0) return;
    if (Date.now() > deadline) throw new Error(`${rows[0]?.n} documents still pending`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe.each(DATABASE_KINDS)('anchoring on the devnets, %s', (kind) => {
  let t: TestService;
  let token: string;
  beforeAll(async () => {
    t = await startTestService(kind, { ANCHORING: 'devnet' });
    token = await t.token('anchor@example.com');
  });
  afterAll(async () => {
    await t?.close();
  });

  it('reports both chains enabled', async () => {
    const info = await api<OnchainInfoDto>(t.url, '/api/onchain/info');
    expect(info.body).toEqual({
      network: 'hardhat',
      chainId: 31337,
      enabled: true,
      explorerTxPrefix: '',
      attestationScanPrefix: '',
      stacksNetwork: 'devnet',
      stacksEnabled: true,
      stacksExplorerTxPrefix: '',
      // The devnets' own endpoints, so the verify page and notary-verify can check a receipt without the service.
      verification: {
        evmRpcUrls: [expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/)],
        stacksApiUrls: [expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/)],
      },
    });
  });

  it('an upload is registered on both chains within seconds; the attestation holds the root, the proof recomputes it', async () => {
    // The Stacks devnet starts on its first use (seconds, more under load): started here, so the time below is
    // the anchoring's own.
    const stacksApi = (info: OnchainInfoDto) => info.verification.stacksApiUrls[0] as string;
    const info = await api<OnchainInfoDto>(t.url, '/api/onchain/info');
    expect((await fetch(`${stacksApi(info.body)}/v2/info`)).status).toBe(200);
    const bytes = randomBytes(1000);
    const started = Date.now();
    const doc = await upload(t, token, bytes, 'one.bin');
    expect(doc).toMatchObject({ onchainStatus: 'pending', stacksStatus: 'pending' });
    const done = await waitRegistered(t, token, doc.id);
    const elapsed = Date.now() - started;
    console.info(`[anchoring ${kind}] upload to registered on both chains: ${elapsed} ms`);
    expect(elapsed).toBeLessThan(15_000);
    expect(done.onchainTxHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(done.onchainAttestationUid).toMatch(/^0x[0-9a-f]{64}$/);
    expect(done.onchainAt).not.toBeNull();
    expect(done.stacksTxId).toMatch(/^[0-9a-f]{64}$/);
    expect(done.stacksAnchoredAt).not.toBeNull();

    const pub = await api<{ found: boolean; document: PublicDocumentDto }>(
      t.url,
      `/api/public/verify?hash=${doc.sha256Hash}`,
    );
    expect(pub.body).toMatchObject({
      found: true,
      document: {
        onchainStatus: 'registered',
        onchainTxHash: done.onchainTxHash,
        onchainAttestationUid: done.onchainAttestationUid,
        stacksStatus: 'registered',
        stacksTxId: done.stacksTxId,
      },
    });

    // The owner's proof recomputes the batch root from the document's hash.
    const proof = await api<AnchorProofBody>(t.url, `/api/documents/${doc.id}/anchor-proof`, { token });
    expect(proof.status).toBe(200);
    const { root, proof: merkleProof } = proof.body;
    if (root === null || merkleProof === null) throw new Error('no proof');
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(doc.sha256Hash);
    expect(verifyMerkleProof(hashFromHex(doc.sha256Hash), merkleProof, hashFromHex(root))).toBe(true);

    // The attestation, read back by its UID from the devnet's EAS contract, holds that root.
    const devnets = t.service.anchoring?.devnets;
    if (!devnets) throw new Error('no devnets');
    const provider = new JsonRpcProvider(devnets.evm.rpcUrl, Network.from(devnets.evm.chainId), {
      staticNetwork: true,
    });
    try {
      const eas = new Contract(devnets.evm.easAddress, easAbi(), provider);
      const att = (await eas.getFunction('getAttestation').staticCall(done.onchainAttestationUid)) as {
        uid: string;
        data: string;
      };
      expect(att.uid).toBe(done.onchainAttestationUid);
      const [anchored] = AbiCoder.defaultAbiCoder().decode(['bytes32'], att.data);
      expect(String(anchored)).toBe(`0x${root}`);
    } finally {
      provider.destroy();
    }

    // The Stacks contract has the root on record.
    const stacks = t.service.anchoring?.chains.find((c) => c.kind === 'stacks');
    if (!(stacks instanceof StacksNotaryChain)) throw new Error('no Stacks chain');
    expect(await stacks.readAnchor(root)).toBeDefined();
  });

  it('1,000 uploads in quick succession all end registered in a few transactions per chain', async () => {
    const count = Number(process.env.ANCHOR_E2E_UPLOADS ?? 1000);
    const before = await t.service.deps.db
      .fork()
      .getConnection()
      .execute('select count(*) as n from anchor_tx');
    const txBefore = Number((before[0] as { n: string | number }).n);
    const started = Date.now();
    const ids: string[] = [];
    const queue = Array.from({ length: count }, (_, i) => i);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
          ids.push((await upload(t, token, randomBytes(256), `bulk-${i}.bin`)).id);
        }
      }),
    );
    const uploaded = Date.now();
    await waitAllRegistered(t, 120_000);
    const done = Date.now();
    const txs: { chain: string; n: string | number }[] = await t.service.deps.db
      .fork()
      .getConnection()
      .execute('select chain, count(*) as n from anchor_tx group by chain');
    const perChain = Object.fromEntries(txs.map((r) => [r.chain, Number(r.n)]));
    const newTx = (perChain.evm ?? 0) + (perChain.stacks ?? 0) - txBefore;
    console.info(
      `[anchoring ${kind}] ${count} uploads in ${uploaded - started} ms, all registered ${done - uploaded} ms later; ` +
        `${newTx / 2} transactions per chain`,
    );
    expect(ids).toHaveLength(count);
    // A batch is cut when ANCHOR_BATCH_MAX (1,000) are pending, when uploads paused for the window (2 s on the
    // devnet) or when its oldest waited 5 windows: never more than one cut per window while uploads last, plus
    // the remainder. (Fewer on a quiet machine; `npm run bench` reports the count, at most 2 there.)
    const windows = Math.ceil((uploaded - started) / 2000) + 2;
    expect(newTx / 2).toBeLessThanOrEqual(windows);
    expect(perChain.evm).toBe(perChain.stacks);

    const status = await t.operator({ command: 'anchors:status' });
    expect(status).toContain('unbatched\t0');
    expect(status).toMatch(/^tx\tevm\tconfirmed\t\d+$/m);
    expect(status).toMatch(/^tx\tstacks\tconfirmed\t\d+$/m);
    expect(status).not.toMatch(/^error\t/m);
  }, 180_000);
});
