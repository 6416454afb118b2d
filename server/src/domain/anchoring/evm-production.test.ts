import type { MikroORM as PgliteORM } from '@mikro-orm/pglite';
import { recordingLog } from '@notary/platform/log.testing';
import { AbiCoder, Contract, Interface, zeroPadValue } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { easAbi } from '../../adapters/chains/eas-abi';
import { EvmEasChain, type EvmEasConfig } from '../../adapters/chains/evm-eas';
import type { HardhatDevnet } from '../../adapters/chains/hardhat-devnet';
import { type RpcProxy, startRpcProxy } from '../../adapters/chains/rpc-proxy.testing';
import { AnchorBatch, AnchorTx, Document } from '../../db/entities';
import {
  type EvmPipelineFixture,
  hardhatEasConfig,
  quietWorker,
  startEvmPipeline,
} from '../../jobs/evm-pipeline.testing';
import { EAS_SCHEMA_UID, type TxStatus } from '../../ports/chains';
import { buildReceipt } from '../documents/receipt';
import type { AnchorWorker, WorkerOptions } from './anchor-worker';
import { collectBatch } from './batch-cut';

/**
 * EVM anchoring as production networks behave, on the real Hardhat node (EAS deployed) and the real pipeline
 * (PGlite): a transaction stuck in the mempool (automine off, or a base fee above its fee cap) replaced with
 * higher EIP-1559 fees after the bound; reorganizations (Hardhat `evm_snapshot`/`evm_revert`) deeper than the
 * inclusion block, before the required confirmations, and a re-inclusion in another block; a provider
 * answering 429 (with and without `Retry-After`, as HTTP or as a JSON-RPC error) through a loopback proxy.
 * Time moves on an injected clock, never by sleeping.
 */

const log = recordingLog();

let fx: EvmPipelineFixture;
let orm: PgliteORM;
let devnet: HardhatDevnet;
let chain: EvmEasChain;

function evmChain(rpcUrl: string, extra: Partial<EvmEasConfig> = {}): EvmEasChain {
  return new EvmEasChain(hardhatEasConfig(devnet, { rpcUrl, rpcTimeoutMs: 5_000, ...extra }));
}

beforeAll(async () => {
  fx = await startEvmPipeline('EP', { rpcTimeoutMs: 5_000 });
  ({ orm, devnet, chain } = fx);
}, 60_000);

afterAll(() => fx?.stop());

/** `n` pending documents collected into one EVM batch; returns the batch id and the document ids. */
async function newBatch(n: number): Promise<{ batchId: string; ids: string[] }> {
  const ids = await fx.addDocuments(n);
  const r = await collectBatch(orm.em.fork(), { chains: ['evm'], maxBatchSize: 1000 });
  expect(r.leafCount).toBe(n);
  return { batchId: r.batchId as string, ids };
}

function worker(c: EvmEasChain, extra: Partial<WorkerOptions> = {}): AnchorWorker {
  return quietWorker({ chain: c, fork: () => orm.em.fork(), log, maxAttempts: 3, ...extra });
}

const rowOf = (batchId: string) => orm.em.fork().findOneOrFail(AnchorTx, { batch: batchId });

async function documentsOf(ids: string[]) {
  return orm.em.fork().find(Document, { id: { $in: ids } });
}

/** Ticks (running `between` after each) until the batch's row is confirmed or failed, at most `max` times. */
async function drain(w: AnchorWorker, batchId: string, between: () => unknown = () => undefined, max = 20) {
  for (let i = 0; i < max; i++) {
    const row = await rowOf(batchId);
    if (row.state === 'confirmed' || row.state === 'failed') return;
    await w.tick();
    await between();
  }
}

type Included = Extract<TxStatus, { state: 'included' }>;
async function included(hash: string): Promise<Included> {
  const s = await chain.getStatus(hash);
  if (s.state !== 'included') throw new Error(`${hash}: expected included, got ${JSON.stringify(s)}`);
  return s;
}

/** Attestations on the current chain by our attester whose data is `root` (hex without 0x). */
async function attestationsOf(root: string): Promise<string[]> {
  const eas = new Interface(easAbi());
  const topic = eas.getEvent('Attested')?.topicHash as string;
  const logs = await chain.provider.getLogs({
    address: devnet.easAddress,
    fromBlock: 0,
    toBlock: 'latest',
    topics: [topic, null, zeroPadValue(chain.address, 32), EAS_SCHEMA_UID],
  });
  const reader = new Contract(devnet.easAddress, eas, chain.provider);
  const uids: string[] = [];
  for (const l of logs) {
    const uid = String(eas.parseLog(l)?.args.getValue('uid'));
    const att = (await reader.getFunction('getAttestation').staticCall(uid)) as { data: string };
    const [anchored] = AbiCoder.defaultAbiCoder().decode(['bytes32'], att.data);
    if (String(anchored) === `0x${root}`) uids.push(uid);
  }
  return uids;
}

/** Every document of the batch registered with the row's transaction, UID and block; one attestation. */
async function expectRegisteredOnce(batchId: string, ids: string[]): Promise<TxRow> {
  const row = await rowOf(batchId);
  expect(row.state).toBe('confirmed');
  expect(row.refusals).toBe(0);
  const batch = await orm.em.fork().findOneOrFail(AnchorBatch, { id: batchId });
  expect(batch.status).toBe('anchored');
  const status = await included(row.txHash as string);
  expect(status).toMatchObject({ anchoredRoot: `0x${batch.root}`, attestationUid: row.attestationUid });
  expect(String(status.blockNumber)).toBe(row.blockNumber);
  for (const d of await documentsOf(ids)) {
    expect(d).toMatchObject({
      onchainStatus: 'registered',
      onchainTxHash: row.txHash,
      onchainAttestationUid: row.attestationUid,
    });
  }
  expect(await attestationsOf(batch.root)).toEqual([row.attestationUid]);
  return row;
}
type TxRow = Awaited<ReturnType<typeof rowOf>>;

/** `value` raised by `percent` %, rounded up: the least a node accepts as a replacement's fee. */
const raised = (value: string | null | undefined, percent: bigint) =>
  (BigInt(value ?? '0') * (100n + percent) + 99n) / 100n;

describe('a stuck transaction is replaced with higher EIP-1559 fees after the bound', () => {
  it('automine off: replaced once the bound has passed on the clock, both fees +10 % (the configured bound); the replacement is mined, registered once', async () => {
    const { batchId, ids } = await newBatch(2);
    const nonceBefore = await chain.chainNonce();
    await devnet.setAutomine(false);
    try {
      let clock = Date.now();
      const w = worker(chain, { stuckAfterMs: 60_000, feeBumpPercent: 10, now: () => new Date(clock) });
      await w.tick(); // signed and broadcast; it waits in the mempool
      const first = await rowOf(batchId);
      expect(first.state).toBe('broadcast');
      expect(await chain.getStatus(first.txHash as string)).toEqual({ state: 'pending' });
      clock += 59_000;
      await w.tick(); // pending, not yet past the bound
      expect((await rowOf(batchId)).txHash).toBe(first.txHash);
      clock += 2_000;
      await w.tick(); // past the bound: the same nonce re-signed with higher fees and sent
      const second = await rowOf(batchId);
      expect(second.state).toBe('broadcast');
      expect(second.txHash).not.toBe(first.txHash);
      expect(second.nonce).toBe(first.nonce);
      expect(second.replacedTxHashes).toEqual([first.txHash]);
      // The node took it: +10 % on both fees is enough (no block came, the suggestion did not rise).
      expect(BigInt(second.maxFee as string)).toBeGreaterThanOrEqual(raised(first.maxFee, 10n));
      expect(BigInt(second.priorityFee as string)).toBeGreaterThanOrEqual(raised(first.priorityFee, 10n));
      expect(BigInt(second.priorityFee as string)).toBeLessThan(raised(first.priorityFee, 11n));
      expect(await chain.getStatus(second.txHash as string)).toEqual({ state: 'pending' });
      expect(
        log.lines.some(
          (l) =>
            l.msg === 'stuck: replacing with higher fees' &&
            l.fields.txHash === first.txHash &&
            l.fields.status === 'pending',
        ),
      ).toBe(true);

      await devnet.mine(1);
      await drain(w, batchId, () => devnet.mine(1));
      const done = await expectRegisteredOnce(batchId, ids);
      expect(done.txHash).toBe(second.txHash);
      expect(done.replacedTxHashes).toEqual([first.txHash]);
      expect(await chain.getStatus(first.txHash as string)).toEqual({ state: 'unknown' });
      expect(await chain.chainNonce()).toBe(nonceBefore + 1n);
    } finally {
      await devnet.setAutomine(true);
    }
  });

  it('a base fee raised above its maxFeePerGas: blocks leave it out; replaced after the bound with a fee the next block takes', async () => {
    const { batchId, ids } = await newBatch(3);
    await devnet.setAutomine(false);
    try {
      let clock = Date.now();
      const w = worker(chain, { stuckAfterMs: 30_000, feeBumpPercent: 10, now: () => new Date(clock) });
      await w.tick();
      const first = await rowOf(batchId);
      expect(first.state).toBe('broadcast');
      const cap = BigInt(first.maxFee as string);
      await devnet.setNextBlockBaseFee(cap * 4n);
      await devnet.mine(2); // two blocks that cannot take it
      expect(await chain.getStatus(first.txHash as string)).toEqual({ state: 'pending' });
      clock += 10_000;
      await w.tick();
      expect((await rowOf(batchId)).txHash).toBe(first.txHash);
      clock += 21_000;
      await w.tick();
      const second = await rowOf(batchId);
      expect(second.replacedTxHashes).toEqual([first.txHash]);
      // Far more than +10 %: the fee follows the next block's base fee (eth_feeHistory), not only the bump.
      expect(BigInt(second.maxFee as string)).toBeGreaterThan(cap * 4n);
      expect(BigInt(second.priorityFee as string)).toBeGreaterThanOrEqual(raised(first.priorityFee, 10n));
      await devnet.mine(1);
      expect((await included(second.txHash as string)).anchoredRoot).toBeTruthy();
      await drain(w, batchId, () => devnet.mine(1));
      const done = await expectRegisteredOnce(batchId, ids);
      expect(done.txHash).toBe(second.txHash);
    } finally {
      await devnet.setAutomine(true);
    }
  });

  it('refused "too low for the next block" (the base fee rose between signing and sending): re-signed higher at once, never a refusal', async () => {
    const { batchId, ids } = await newBatch(1);
    let raisedOnce = false;
    const w = worker(chain, {
      afterSignedCommit: async () => {
        if (raisedOnce) return;
        raisedOnce = true;
        const fees = await chain.suggestFees();
        await devnet.setNextBlockBaseFee(fees.maxFee * 3n);
      },
    });
    log.lines.length = 0;
    await w.tick();
    expect(
      log
        .texts('info')
        .some((m) => /^re-signing with higher fees .*underpriced: .*too low for the next block/.test(m)),
    ).toBe(true);
    await drain(w, batchId);
    const done = await expectRegisteredOnce(batchId, ids);
    expect(done.replacedTxHashes).toHaveLength(1);
    expect(done.attempts).toBe(0);
  });

  it('dropped by the node: the same bytes go out again; dropped again past the bound, replaced with higher fees', async () => {
    const { batchId, ids } = await newBatch(1);
    await devnet.setAutomine(false);
    try {
      let clock = Date.now();
      const w = worker(chain, { stuckAfterMs: 60_000, now: () => new Date(clock) });
      await w.tick();
      const first = await rowOf(batchId);
      expect(first.state).toBe('broadcast');
      expect(await devnet.dropTransaction(first.txHash as string)).toBe(true);
      clock += 10_000;
      await w.tick(); // unknown: back to signed
      expect((await rowOf(batchId)).state).toBe('signed');
      await w.tick(); // the same bytes again
      const resent = await rowOf(batchId);
      expect(resent).toMatchObject({ state: 'broadcast', txHash: first.txHash });
      // Sending the same bytes again does not restart the clock that says they are stuck.
      expect(resent.broadcastAt?.getTime()).toBe(first.broadcastAt?.getTime());
      expect(await chain.getStatus(first.txHash as string)).toEqual({ state: 'pending' });

      expect(await devnet.dropTransaction(first.txHash as string)).toBe(true);
      clock += 51_000;
      await w.tick(); // unknown again, past the bound: a replacement with higher fees
      const second = await rowOf(batchId);
      expect(second.state).toBe('broadcast');
      expect(second.txHash).not.toBe(first.txHash);
      expect(second.replacedTxHashes).toEqual([first.txHash]);
      expect(BigInt(second.priorityFee as string)).toBeGreaterThan(BigInt(first.priorityFee as string));
      await devnet.mine(1);
      await drain(w, batchId, () => devnet.mine(1));
      expect((await expectRegisteredOnce(batchId, ids)).txHash).toBe(second.txHash);
    } finally {
      await devnet.setAutomine(true);
    }
  });

  it('a fee bump below 10 % is refused at construction', () => {
    expect(() => worker(chain, { feeBumpPercent: 9.9 })).toThrow(/at least 10 %/);
    expect(() => worker(chain, { feeBumpPercent: Number.NaN })).toThrow(RangeError);
  });
});

describe('reorganizations (evm_snapshot / evm_revert on the real node)', () => {
  it('deeper than the inclusion block: the registered batch goes back to pending, is re-anchored and registers again; receipt and UID follow the new inclusion', async () => {
    const { batchId, ids } = await newBatch(2);
    const w = worker(chain, { confirmations: 4 });
    const snap = await devnet.snapshot(); // before the inclusion block
    await w.tick(); // signed, sent, mined (automine)
    await w.tick(); // included: registered, 1 of 4 confirmations
    const first = await rowOf(batchId);
    expect(first.state).toBe('included');
    const oldBlock = Number(first.blockNumber);
    const oldBlockHash = await devnet.blockHash(oldBlock);
    for (const d of await documentsOf(ids)) expect(d.onchainStatus).toBe('registered');
    await devnet.mine(2);
    await w.tick(); // 3 of 4
    expect((await rowOf(batchId)).state).toBe('included');

    expect(await devnet.revert(snap)).toBe(true);
    // Gone from the chain and from the mempool; the new chain grows past the old head.
    expect(await chain.getStatus(first.txHash as string)).toEqual({ state: 'unknown' });
    await devnet.mine(5);
    expect(await devnet.blockHash(oldBlock)).not.toBe(oldBlockHash);

    log.lines.length = 0;
    await w.tick(); // the receipt is gone: documents back to pending, the row back to signed
    const reorged = await rowOf(batchId);
    expect(reorged).toMatchObject({ state: 'signed', blockNumber: null, attestationUid: null });
    expect(reorged.lastError).toMatch(/receipt disappeared \(unknown\)/);
    for (const d of await documentsOf(ids)) {
      expect(d).toMatchObject({ onchainStatus: 'pending', onchainTxHash: null, onchainAttestationUid: null });
    }
    expect(
      log.lines.some(
        (l) =>
          l.msg === 'no longer included: re-sending' &&
          l.fields.txHash === first.txHash &&
          l.fields.status === 'unknown',
      ),
    ).toBe(true);

    await drain(w, batchId, () => devnet.mine(1));
    const done = await expectRegisteredOnce(batchId, ids);
    // The same signed bytes went out again (same nonce, same hash), included in a block of the new chain.
    expect(done.txHash).toBe(first.txHash);
    expect(Number(done.blockNumber)).toBeGreaterThan(oldBlock + 4);
    expect(done.attestationUid).not.toBe(first.attestationUid);

    const doc = await orm.em.fork().findOneOrFail(Document, { id: ids[0] as string });
    const receipt = await buildReceipt(
      orm.em.fork(),
      {
        config: {
          serviceName: 'test',
          anchoring: {
            mode: 'devnet',
            batchSeconds: 1,
            batchMax: 10,
            evmConfirmations: 4,
            stacksConfirmations: 1,
          },
        },
        publicUrl: 'http://127.0.0.1',
      },
      doc,
    );
    expect(receipt.evm).toMatchObject({
      status: 'registered',
      txHash: done.txHash,
      attestationUid: done.attestationUid,
      blockNumber: Number(done.blockNumber),
    });
  });

  it('after registered, before the confirmations: back in the mempool (pending), the documents return to pending; re-included at the same height in another block, they take its UID', async () => {
    const { batchId, ids } = await newBatch(1);
    const w = worker(chain, { confirmations: 3 });
    await devnet.setAutomine(false);
    try {
      await w.tick(); // sent, in the mempool
      const snap = await devnet.snapshot(); // the mempool holds it
      await devnet.mine(1);
      await w.tick(); // included: registered, 1 of 3
      const first = await rowOf(batchId);
      expect(first.state).toBe('included');
      const height = Number(first.blockNumber);
      const oldBlockHash = await devnet.blockHash(height);
      expect((await documentsOf(ids))[0]?.onchainStatus).toBe('registered');

      expect(await devnet.revert(snap)).toBe(true); // the block is gone, the transaction is back in the mempool
      expect(await chain.getStatus(first.txHash as string)).toEqual({ state: 'pending' });
      await w.tick();
      expect((await rowOf(batchId)).state).toBe('signed');
      expect((await documentsOf(ids))[0]).toMatchObject({
        onchainStatus: 'pending',
        onchainAttestationUid: null,
      });

      // The network includes it again at the same height, in a block with another time (and hash).
      const head = await chain.provider.getBlock('latest');
      await devnet.setNextBlockTimestamp((head?.timestamp ?? 0) + 120);
      await devnet.mine(1);
      expect(await devnet.blockHash(height)).not.toBe(oldBlockHash);
      await drain(w, batchId, () => devnet.mine(1));
      const done = await expectRegisteredOnce(batchId, ids);
      expect(done.blockNumber).toBe(String(height));
      expect(done.attestationUid).not.toBe(first.attestationUid);
    } finally {
      await devnet.setAutomine(true);
    }
  });

  it('re-included in another block between two polls: the registered documents take the new block and UID', async () => {
    const { batchId, ids } = await newBatch(2);
    const w = worker(chain, { confirmations: 3 });
    await devnet.setAutomine(false);
    try {
      await w.tick();
      const snap = await devnet.snapshot();
      await devnet.mine(1);
      await w.tick(); // registered, 1 of 3
      const first = await rowOf(batchId);
      const height = Number(first.blockNumber);
      const oldBlockHash = await devnet.blockHash(height);
      expect(await devnet.revert(snap)).toBe(true);
      const head = await chain.provider.getBlock('latest');
      await devnet.setNextBlockTimestamp((head?.timestamp ?? 0) + 300);
      await devnet.mine(1); // same height, another block: the pipeline did not see the gap
      expect(await devnet.blockHash(height)).not.toBe(oldBlockHash);

      log.lines.length = 0;
      await w.tick();
      const moved = await rowOf(batchId);
      expect(moved.state).toBe('included');
      expect(moved.attestationUid).not.toBe(first.attestationUid);
      expect(moved.attestationUid).toBe((await included(first.txHash as string)).attestationUid);
      for (const d of await documentsOf(ids)) {
        expect(d).toMatchObject({ onchainStatus: 'registered', onchainAttestationUid: moved.attestationUid });
      }
      expect(log.lines.some((l) => l.msg === 'batch reorganized' && l.fields.batch === batchId)).toBe(true);
      await drain(w, batchId, () => devnet.mine(1));
      await expectRegisteredOnce(batchId, ids);
    } finally {
      await devnet.setAutomine(true);
    }
  });
});

describe('a provider answering 429 (loopback proxy in front of the node)', () => {
  let proxy: RpcProxy;
  let clock = 0;
  beforeAll(async () => {
    proxy = await startRpcProxy(devnet.rpcUrl, { clock: () => clock });
  });
  afterAll(async () => {
    await proxy?.close();
  });

  /** A chain through the proxy and a worker, both on the test's clock. */
  function limitedPipeline(extra: Partial<WorkerOptions> = {}) {
    const c = evmChain(`${proxy.url}/v3/0123456789abcdef0123456789abcdef`, {
      rateLimit: { now: () => clock },
    });
    return { c, w: worker(c, { now: () => new Date(clock), ...extra }) };
  }

  /** Ticks `n` times at the current clock and returns the requests the proxy saw meanwhile. */
  async function ticks(w: AnchorWorker, n: number): Promise<number> {
    const before = proxy.requests.length;
    for (let i = 0; i < n; i++) await w.tick();
    return proxy.requests.length - before;
  }

  it('Retry-After is honoured: nothing goes out before it, nothing is counted or failed, then the batch is anchored', async () => {
    const { batchId, ids } = await newBatch(2);
    clock = Date.now();
    const { c, w } = limitedPipeline();
    try {
      proxy.requests.length = 0;
      proxy.fault(3, {
        kind: 'answer',
        status: 429,
        headers: { 'retry-after': '5' },
        body: 'Too Many Requests',
      });
      expect(await ticks(w, 1)).toBe(1); // the nonce read: 429, one request (no retry by ethers)
      let row = await rowOf(batchId);
      expect(row).toMatchObject({ state: 'queued', attempts: 0, refusals: 0 });
      expect(row.lastError).toMatch(/^rate-limited by the RPC endpoint \(HTTP 429, Retry-After: 5\)/);
      expect(await ticks(w, 5)).toBe(0); // paused: no request at all
      clock += 4_999;
      expect(await ticks(w, 3)).toBe(0);
      clock += 1;
      expect(await ticks(w, 1)).toBe(1); // due: one request, limited again
      expect(await ticks(w, 3)).toBe(0);
      clock += 5_000;
      expect(await ticks(w, 1)).toBe(1);
      expect(proxy.pendingFaults()).toBe(0);
      row = await rowOf(batchId);
      expect(row).toMatchObject({ state: 'queued', attempts: 0, refusals: 0 });
      clock += 5_000;
      await drain(w, batchId);
      await expectRegisteredOnce(batchId, ids);
      const limited = proxy.requests.filter((r) => r.answer === 'answer').map((r) => r.at);
      expect(limited).toHaveLength(3);
      const [a = 0, b = 0, c3 = 0] = limited;
      expect(b - a).toBeGreaterThanOrEqual(5_000);
      expect(c3 - b).toBeGreaterThanOrEqual(5_000);
    } finally {
      c.close();
    }
  });

  it('without Retry-After: a bounded doubling backoff (1 s, 2 s, 4 s), one request each time', async () => {
    const { batchId, ids } = await newBatch(1);
    clock = Date.now();
    const { c, w } = limitedPipeline();
    try {
      proxy.requests.length = 0;
      proxy.fault(3, { kind: 'answer', status: 429, body: '{"message":"slow down"}' });
      const start = clock;
      // Tick every 250 ms of the clock for 10 s: requests go out only when each wait is over.
      for (let t = 0; t <= 10_000; t += 250) {
        clock = start + t;
        await w.tick();
      }
      const limited = proxy.requests.filter((r) => r.answer === 'answer').map((r) => r.at - start);
      expect(limited).toEqual([0, 1_000, 3_000]);
      const firstOk = proxy.requests.find((r) => r.answer === 'forwarded');
      expect((firstOk?.at ?? 0) - start).toBe(7_000);
      await drain(w, batchId);
      await expectRegisteredOnce(batchId, ids);
    } finally {
      c.close();
    }
  });

  it('a rate-limited broadcast (Infura-style JSON error with backoff_seconds) is not a refusal; the same bytes go out after the wait', async () => {
    const { batchId, ids } = await newBatch(2);
    clock = Date.now();
    const { c, w } = limitedPipeline({ maxAttempts: 1 });
    try {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32005,
          message: 'project ID request rate exceeded',
          data: { see: 'https://infura.io/docs/ethereum/jsonrpc/ratelimits', backoff_seconds: 3 },
        },
      });
      proxy.fault(2, { kind: 'answer', status: 429, body }, ['eth_sendRawTransaction']);
      await w.tick();
      let row = await rowOf(batchId);
      expect(row).toMatchObject({ state: 'signed', refusals: 0 });
      expect(row.lastError).toMatch(/^rate-limited: HTTP 429: .*request rate exceeded/);
      const signedHash = row.txHash;
      clock += 2_999;
      expect(await ticks(w, 2)).toBe(0);
      clock += 1;
      await w.tick(); // limited once more
      row = await rowOf(batchId);
      expect(row).toMatchObject({ state: 'signed', refusals: 0, txHash: signedHash });
      clock += 3_000;
      await drain(w, batchId);
      const done = await expectRegisteredOnce(batchId, ids);
      expect(done.txHash).toBe(signedHash); // never re-signed: a limit is no refusal (maxAttempts 1)
    } finally {
      c.close();
    }
  });

  it('a JSON-RPC rate-limit error in an HTTP 200 answer to a status read backs off as well', async () => {
    const { batchId, ids } = await newBatch(1);
    clock = Date.now();
    const { c, w } = limitedPipeline();
    try {
      await w.tick(); // signed and sent through the proxy, mined at once
      const limitedBody = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        error: { code: 429, message: 'Your app has exceeded its compute units per second capacity' },
      });
      proxy.fault(1, { kind: 'answer', status: 200, body: limitedBody }, ['eth_getTransactionReceipt']);
      const before = proxy.requests.length;
      await w.tick();
      expect(proxy.requests.length - before).toBe(1);
      const row = await rowOf(batchId);
      expect(row).toMatchObject({ state: 'broadcast', refusals: 0 });
      expect(row.lastError).toMatch(/JSON-RPC error 429: Your app has exceeded/);
      expect(await ticks(w, 3)).toBe(0);
      clock += 1_000;
      await drain(w, batchId);
      await expectRegisteredOnce(batchId, ids);
    } finally {
      c.close();
    }
  });
});
