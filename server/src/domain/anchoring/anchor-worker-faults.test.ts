import { once } from 'node:events';
import { type AddressInfo, createServer, Socket } from 'node:net';
import type { MikroORM as PgliteORM } from '@mikro-orm/pglite';
import { recordingLog } from '@notary/platform/log.testing';
import { randomPrivateKey } from '@stacks/transactions';
import { JsonRpcProvider, Network, Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type StacksDevnet, startStacksDevnet } from '../../adapters/chains/devnets/stacks-devnet';
import { EvmEasChain } from '../../adapters/chains/evm-eas';
import type { HardhatDevnet } from '../../adapters/chains/hardhat-devnet';
import { StacksNotaryChain } from '../../adapters/chains/stacks';
import { AnchorBatch, AnchorTx, Document, DocumentAnchor } from '../../db/entities';
import {
  type EvmPipelineFixture,
  hardhatEasConfig,
  quietWorker,
  startEvmPipeline,
} from '../../jobs/evm-pipeline.testing';
import { recordingActivity } from '../../ports/activity.testing';
import type { AnchorChain } from '../../ports/chains';
import type { AnchorWorker, WorkerOptions } from './anchor-worker';
import { collectBatch } from './batch-cut';

/**
 * Anchoring faults driven through the real pipeline (PGlite in memory, the in-process Hardhat devnet with the
 * EAS contracts, the Clarity VM-backed Stacks devnet): RPC unreachable then back, nonce too low, a stuck
 * transaction replaced with higher fees, a Stacks rejection read from the node's response.
 */

const log = recordingLog();

let fx: EvmPipelineFixture;
let orm: PgliteORM;
let devnet: HardhatDevnet;
let chain: EvmEasChain;

function evmChain(rpcUrl: string): EvmEasChain {
  return new EvmEasChain(hardhatEasConfig(devnet, { rpcUrl, rpcTimeoutMs: 2_000 }));
}

beforeAll(async () => {
  fx = await startEvmPipeline('TT', { rpcTimeoutMs: 2_000 });
  ({ orm, devnet, chain } = fx);
}, 60_000);

afterAll(() => fx?.stop());

const addDocuments = (n: number) => fx.addDocuments(n);

/** Collects batches of the given chain until no unbatched pending document is left. */
async function collectAll(chainKind: 'evm' | 'stacks', maxBatchSize = 1000): Promise<string[]> {
  const ids: string[] = [];
  for (;;) {
    const r = await collectBatch(orm.em.fork(), { chains: [chainKind], maxBatchSize });
    if (r.batchId) ids.push(r.batchId);
    if (!r.more) return ids;
  }
}

function worker(c: AnchorChain, extra: Partial<WorkerOptions> = {}): AnchorWorker {
  return quietWorker({ chain: c, fork: () => orm.em.fork(), log, ...extra });
}

async function rowsOf(batchIds: string[]) {
  return orm.em.fork().find(AnchorTx, { batch: { $in: batchIds } }, { orderBy: { nonce: 'asc' } });
}

/** Ticks (running `between` after each) until every row of the batches is confirmed or failed. */
async function drain(
  w: AnchorWorker,
  batchIds: string[],
  between: () => unknown = () => undefined,
  max = 30,
): Promise<void> {
  for (let i = 0; i < max; i++) {
    const open = (await rowsOf(batchIds)).filter((r) => r.state !== 'confirmed' && r.state !== 'failed');
    if (open.length === 0) return;
    await w.tick();
    await between();
  }
}

/** A loopback TCP proxy in front of `target` that can drop every connection (down) and accept again (up). */
async function startProxy(target: string) {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let up = true;
  const server = createServer((client) => {
    if (!up) {
      client.destroy();
      return;
    }
    const upstream = new Socket();
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    upstream.connect(Number(port), hostname, () => {
      client.pipe(upstream);
      upstream.pipe(client);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    down() {
      up = false;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    up() {
      up = true;
    },
    async close() {
      this.down();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function expectRegistered(batchIds: string[]): Promise<void> {
  const em = orm.em.fork();
  for (const row of await rowsOf(batchIds)) {
    expect(row.state).toBe('confirmed');
    const batch = await em.findOneOrFail(AnchorBatch, { id: row.batch.id });
    expect(batch.status).toBe('anchored');
    const st = await chain.getStatus(row.txHash as string);
    expect(st).toMatchObject({ state: 'included', anchoredRoot: `0x${batch.root}` });
    const anchors = await em.find(DocumentAnchor, { batch: row.batch.id });
    expect(anchors.length).toBe(batch.leafCount);
    for (const a of anchors) {
      const d = await em.findOneOrFail(Document, { id: a.document.id });
      expect(d).toMatchObject({
        onchainStatus: 'registered',
        onchainTxHash: row.txHash,
        onchainAttestationUid: row.attestationUid,
      });
    }
  }
}

describe('anchoring pipeline faults on Hardhat + EAS', () => {
  it('RPC unreachable then back: every document registered, one attestation per batch', async () => {
    const proxy = await startProxy(devnet.rpcUrl);
    const viaProxy = evmChain(proxy.url);
    try {
      const ids = await addDocuments(6);
      const batchIds = await collectAll('evm', 2);
      expect(batchIds).toHaveLength(3);
      const nonceBefore = await chain.chainNonce();
      let signedCount = 0;
      const counted = recordingActivity();
      // The first batch goes out normally; the proxy dies right after the second is signed (its broadcast is
      // `unreachable`); the third cannot even read its nonce.
      const w = worker(viaProxy, {
        activity: counted.activity,
        afterSignedCommit: () => {
          if (++signedCount === 2) proxy.down();
        },
      });
      await w.tick();
      for (let i = 0; i < 3; i++) await w.tick(); // status polls and nonce reads throw while down
      let rows = await rowsOf(batchIds);
      expect(rows.map((r) => r.state).sort()).toEqual(['broadcast', 'queued', 'signed']);
      for (const r of rows) expect(r.lastError).toBeTruthy();
      expect(rows.find((r) => r.state === 'signed')?.lastError).toMatch(/^unreachable: /);
      for (const id of ids) {
        expect((await orm.em.fork().findOneOrFail(Document, { id })).onchainStatus).toBe('pending');
      }
      expect(await chain.chainNonce()).toBe(nonceBefore + 1n); // only the first reached the node

      proxy.up();
      await drain(w, batchIds);
      rows = await rowsOf(batchIds);
      expect(new Set(rows.map((r) => r.txHash)).size).toBe(3);
      await expectRegistered(batchIds);
      expect(await chain.chainNonce()).toBe(nonceBefore + 3n); // no double anchoring
      // The outage is counted as failed attempts, never as a failed batch; each batch confirmed once.
      expect(counted.lines.filter((l) => l === 'confirmed evm')).toHaveLength(3);
      expect(counted.lines.filter((l) => l === 'attempt evm').length).toBeGreaterThanOrEqual(1);
      expect(counted.lines.filter((l) => l.startsWith('failed'))).toEqual([]);
    } finally {
      viaProxy.close();
      await proxy.close();
    }
  }, 60_000);

  it('nonce too low: the nonce went to another transaction; resynced from the chain, anchored once', async () => {
    await addDocuments(2);
    const [batchId] = await collectAll('evm');
    const nonceBefore = await chain.chainNonce();
    const provider = new JsonRpcProvider(devnet.rpcUrl, Network.from(devnet.chainId), {
      staticNetwork: true,
      cacheTimeout: -1,
    });
    try {
      const wallet = new Wallet(devnet.funderPrivateKey, provider);
      let stolen: string | undefined;
      const w = worker(chain, {
        // Between the commit and the broadcast, another sender of the same key takes that very nonce.
        afterSignedCommit: async (row) => {
          if (stolen) return;
          stolen = row.txHash;
          const r = await orm.em.fork().findOneOrFail(AnchorTx, { id: row.id });
          const plain = await wallet.sendTransaction({
            to: wallet.address,
            value: 0n,
            nonce: Number(r.nonce),
          });
          await plain.wait();
        },
      });
      log.lines.length = 0;
      await drain(w, [batchId as string]);
      const [row] = await rowsOf([batchId as string]);
      expect(row?.state).toBe('confirmed');
      expect(row?.replacedTxHashes).toContain(stolen);
      expect(row?.txHash).not.toBe(stolen);
      expect(BigInt(row?.nonce as string)).toBe(nonceBefore + 1n);
      expect(log.texts('error').some((m) => m.includes('nonce-too-low'))).toBe(true);
      expect(await chain.getStatus(stolen as string)).toEqual({ state: 'unknown' });
      await expectRegistered([batchId as string]);
      expect(await chain.chainNonce()).toBe(nonceBefore + 2n); // the plain transfer + one attestation
    } finally {
      provider.destroy();
    }
  }, 60_000);

  it('a stuck transaction is replaced with higher fees; the replacement counts, anchored once', async () => {
    await addDocuments(3);
    const [batchId] = await collectAll('evm');
    const nonceBefore = await chain.chainNonce();
    await devnet.setAutomine(false);
    try {
      // A clock the test moves, so "stuck" does not depend on how loaded the machine is.
      let clock = Date.now();
      const w = worker(chain, { stuckAfterMs: 150, now: () => new Date(clock) });
      await w.tick(); // signed and broadcast, waiting in the mempool
      const [first] = await rowsOf([batchId as string]);
      expect(first?.state).toBe('broadcast');
      const original = first?.txHash as string;
      expect(await chain.getStatus(original)).toEqual({ state: 'pending' });
      await w.tick(); // not stuck yet
      expect((await rowsOf([batchId as string]))[0]?.txHash).toBe(original);
      clock += 300;
      await w.tick(); // stuck: re-signed with the same nonce and higher fees, sent
      const [replaced] = await rowsOf([batchId as string]);
      expect(replaced?.state).toBe('broadcast');
      expect(replaced?.txHash).not.toBe(original);
      expect(replaced?.replacedTxHashes).toEqual([original]);
      expect(replaced?.nonce).toBe(first?.nonce);
      expect(BigInt(replaced?.maxFee as string)).toBeGreaterThan(BigInt(first?.maxFee as string));
      expect(BigInt(replaced?.priorityFee as string)).toBeGreaterThan(BigInt(first?.priorityFee as string));
      await devnet.mine(1);
      await drain(w, [batchId as string], () => devnet.mine(1));
      const [done] = await rowsOf([batchId as string]);
      expect(done?.txHash).toBe(replaced?.txHash);
      expect(await chain.getStatus(original)).toEqual({ state: 'unknown' });
      await expectRegistered([batchId as string]);
      expect(await chain.chainNonce()).toBe(nonceBefore + 1n);
    } finally {
      await devnet.setAutomine(true);
    }
  }, 60_000);
});

describe('anchoring pipeline faults on the Stacks devnet', () => {
  let dev: StacksDevnet;
  beforeAll(async () => {
    dev = await startStacksDevnet({ blockTimeMs: 0 });
  }, 60_000);
  afterAll(async () => {
    await dev?.stop();
  });

  it('a rejection (NotEnoughFunds) is read from the node into lastError; funded, the batch is anchored', async () => {
    const key = randomPrivateKey();
    const stacks = new StacksNotaryChain({
      apiUrl: dev.url,
      privateKey: key,
      contractId: dev.contractId,
      network: 'devnet',
      explorerTxPrefix: '',
    });
    const ids = await addDocuments(3);
    const [batchId] = await collectAll('stacks');
    const w = worker(stacks);
    await w.tick();
    let [row] = await rowsOf([batchId as string]);
    expect(row?.state).toBe('queued'); // retrying with a fresh signature, not silently pending
    expect(row?.attempts).toBe(1);
    expect(row?.lastError).toMatch(/^rejected: NotEnoughFunds \{"expected":"0x[0-9a-f]+","actual":"0x0+"\}/);
    await w.tick();
    [row] = await rowsOf([batchId as string]);
    expect(row?.attempts).toBe(2);
    for (const id of ids) {
      expect((await orm.em.fork().findOneOrFail(Document, { id })).stacksStatus).toBe('pending');
    }

    dev.fund(stacks.senderAddress, 1_000_000n);
    await drain(w, [batchId as string], () => dev.mine(1));
    [row] = await rowsOf([batchId as string]);
    expect(row?.state).toBe('confirmed');
    expect(row?.lastError).toBeNull();
    const batch = await orm.em.fork().findOneOrFail(AnchorBatch, { id: batchId as string });
    expect(batch.status).toBe('anchored');
    expect(await stacks.getStatus(row?.txHash as string)).toMatchObject({
      state: 'included',
      anchoredRoot: `0x${batch.root}`,
    });
    for (const id of ids) {
      expect(await orm.em.fork().findOneOrFail(Document, { id })).toMatchObject({
        stacksStatus: 'registered',
        stacksTxId: String(row?.txHash).replace(/^0x/, ''),
      });
    }
  }, 60_000);

  it('an outage does not use up the attempts: one refusal after it does not fail the batch', async () => {
    const proxy = await startProxy(dev.url);
    const stacks = new StacksNotaryChain({
      apiUrl: proxy.url,
      privateKey: randomPrivateKey(),
      contractId: dev.contractId,
      network: 'devnet',
      explorerTxPrefix: '',
    });
    try {
      await addDocuments(1);
      const [batchId] = await collectAll('stacks');
      const w = worker(stacks, { maxAttempts: 2 });
      proxy.down();
      for (let i = 0; i < 4; i++) await w.tick();
      proxy.up();
      await w.tick(); // the node answers: NotEnoughFunds, a first refusal
      const [row] = await rowsOf([batchId as string]);
      expect(row?.state).toBe('queued');
      expect(row?.refusals).toBe(1);
      expect(row?.lastError).toMatch(/NotEnoughFunds/);
      // Before `refusals` existed, the 4 outage ticks had used up `maxAttempts` and this refusal failed the batch.
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('refused past maxAttempts: the row and batch are failed and say why', async () => {
    const stacks = new StacksNotaryChain({
      apiUrl: dev.url,
      privateKey: randomPrivateKey(),
      contractId: dev.contractId,
      network: 'devnet',
      explorerTxPrefix: '',
    });
    await addDocuments(1);
    const [batchId] = await collectAll('stacks');
    const failedRows = () => orm.em.fork().count(AnchorTx, { chain: 'stacks', state: 'failed' });
    const failedBefore = await failedRows();
    const counted = recordingActivity();
    await drain(worker(stacks, { maxAttempts: 2, activity: counted.activity }), [batchId as string]);
    const [row] = await rowsOf([batchId as string]);
    expect(row?.state).toBe('failed');
    // Refusals before the last are attempts retried; the last fails the batch: each batch this worker failed
    // (earlier tests' leftovers on the chain too) is counted once as failed.
    expect(counted.lines).toContain('attempt stacks');
    expect(counted.lines.filter((l) => l !== 'attempt stacks')).toEqual(
      Array.from({ length: (await failedRows()) - failedBefore }, () => 'failed stacks'),
    );
    expect(row?.lastError).toMatch(/^rejected: NotEnoughFunds/);
    expect((await orm.em.fork().findOneOrFail(AnchorBatch, { id: batchId as string })).status).toBe('failed');
  }, 60_000);
});
