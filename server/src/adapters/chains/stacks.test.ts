import { createServer } from 'node:net';
import { deserializeTransaction, privateKeyToAddress, randomPrivateKey } from '@stacks/transactions';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChainRateLimitedError } from '../../ports/chains.js';
import { type StacksDevnet, startStacksDevnet } from './devnets/stacks-devnet.js';
import {
  classifyRejection,
  StacksConfigError,
  StacksNotaryChain,
  type StacksNotaryConfig,
} from './stacks.js';

const fee = { maxFee: 1000n, priorityFee: 0n };
const rootOf = (byte: number, len = 32) => new Uint8Array(len).fill(byte);
const hex = (b: Uint8Array) => `0x${Buffer.from(b).toString('hex')}`;

describe('StacksNotaryChain against the Clarity VM-backed devnet', () => {
  let dev: StacksDevnet;
  let chain: StacksNotaryChain;
  beforeAll(async () => {
    dev = await startStacksDevnet({ blockTimeMs: 0 });
    chain = new StacksNotaryChain({
      apiUrl: dev.url,
      privateKey: dev.senderKey,
      contractId: dev.contractId,
      network: 'devnet',
      explorerTxPrefix: 'https://explorer.hiro.so/txid',
    });
  });
  afterAll(async () => {
    await dev.stop();
  });

  it('anchors a root: txid matches the node, the root is read back, confirmations grow', async () => {
    const root = rootOf(0xa1);
    const nonce = await chain.chainNonce();
    expect(nonce).toBe(0n);
    const fees = await chain.suggestFees();
    expect(fees.maxFee).toBeGreaterThanOrEqual(1000n);
    const signed = await chain.signAnchor(root, nonce, fees);
    expect(signed.txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(signed.txHash).toBe(`0x${deserializeTransaction(signed.raw).txid()}`);

    // The node answers the txid as a JSON string: it must be ours.
    const res = await fetch(`${dev.url}/v2/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: Buffer.from(signed.raw),
    });
    expect(`0x${(await res.json()) as string}`).toBe(signed.txHash);
    expect(await chain.broadcast(signed.raw)).toEqual({ ok: true }); // same bytes again: idempotent
    expect(await chain.getStatus(signed.txHash)).toEqual({ state: 'pending' });
    expect(await chain.chainNonce()).toBe(1n); // pending included

    const height = dev.mine();
    const st = await chain.getStatus(signed.txHash);
    expect(st).toEqual({
      state: 'included',
      blockNumber: BigInt(height),
      confirmations: 1,
      anchoredRoot: hex(root),
    });
    expect(await chain.readAnchor(hex(root))).toEqual({
      height: BigInt(height),
      sender: chain.senderAddress,
    });
    dev.mine(2);
    expect(await chain.getStatus(signed.txHash)).toMatchObject({ state: 'included', confirmations: 3 });
    expect(chain.explorerUrl(signed.txHash)).toBe(
      `https://explorer.hiro.so/txid/${signed.txHash}?chain=devnet`,
    );
  });

  it('a 31-byte buffer is aborted by the contract (err u100), read from the node', async () => {
    await expect(chain.signAnchor(rootOf(1, 31), 0n, fee)).rejects.toThrow(/32 bytes/);
    const signed = await chain.signAnchorUnchecked(rootOf(0xb2, 31), await chain.chainNonce(), fee);
    expect(await chain.broadcast(signed.raw)).toEqual({ ok: true });
    dev.mine();
    expect(await chain.getStatus(signed.txHash)).toEqual({
      state: 'failed',
      reason: 'abort_by_response: (err u100)',
    });
  });

  it('a 33-byte buffer is refused at broadcast with the node reason BadFunctionArgument', async () => {
    const signed = await chain.signAnchorUnchecked(rootOf(0xc3, 33), await chain.chainNonce(), fee);
    const r = await chain.broadcast(signed.raw);
    expect(r).toMatchObject({ ok: false, kind: 'rejected' });
    expect(r.ok ? '' : r.reason).toMatch(/^BadFunctionArgument .*\(buff 33\) exceeds \(buff 32\)/);
    expect(await chain.getStatus(signed.txHash)).toEqual({ state: 'unknown' });
  });

  it('a stale nonce is classified from the node response (BadNonce → nonce-too-low)', async () => {
    const signed = await chain.signAnchor(rootOf(0xd4), 0n, fee);
    const r = await chain.broadcast(signed.raw);
    expect(r).toMatchObject({ ok: false, kind: 'nonce-too-low' });
    expect(r.ok ? '' : r.reason).toMatch(/^BadNonce \{"expected":2,"actual":0/);
  });

  it('a conflicting nonce in the mempool → already-known; a higher fee replaces it', async () => {
    const n = await chain.chainNonce();
    const a = await chain.signAnchor(rootOf(0xe5), n, fee);
    const b = await chain.signAnchor(rootOf(0xe6), n, fee);
    expect(await chain.broadcast(a.raw)).toEqual({ ok: true });
    expect(await chain.broadcast(b.raw)).toMatchObject({
      ok: false,
      kind: 'already-known',
      reason: /ConflictingNonceInMempool/,
    });
    const c = await chain.signAnchor(rootOf(0xe5), n, { maxFee: 2000n, priorityFee: 0n });
    expect(await chain.broadcast(c.raw)).toEqual({ ok: true });
    dev.mine();
    expect(await chain.getStatus(a.txHash)).toEqual({ state: 'unknown' });
    expect(await chain.getStatus(c.txHash)).toMatchObject({
      state: 'included',
      anchoredRoot: hex(rootOf(0xe5)),
    });
  });

  it('anchoring the same root twice succeeds and keeps the first record', async () => {
    const first = await chain.readAnchor(hex(rootOf(0xa1)));
    const again = await chain.signAnchor(rootOf(0xa1), await chain.chainNonce(), fee);
    expect(await chain.broadcast(again.raw)).toEqual({ ok: true });
    dev.mine();
    expect(await chain.getStatus(again.txHash)).toMatchObject({
      state: 'included',
      anchoredRoot: hex(rootOf(0xa1)),
    });
    expect(await chain.readAnchor(hex(rootOf(0xa1)))).toEqual(first);
  });

  it('not enough funds is read from the node (NotEnoughFunds → rejected)', async () => {
    const signed = await chain.signAnchor(rootOf(0xf7), await chain.chainNonce(), {
      maxFee: 10n ** 15n,
      priorityFee: 0n,
    });
    expect(await chain.broadcast(signed.raw)).toMatchObject({
      ok: false,
      kind: 'rejected',
      reason: /^NotEnoughFunds/,
    });
  });

  it('an unreachable node → unreachable', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const addr = s.address();
        s.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
      });
    });
    const dead = new StacksNotaryChain({
      apiUrl: `http://127.0.0.1:${port}`,
      privateKey: dev.senderKey,
      contractId: dev.contractId,
      network: 'devnet',
      explorerTxPrefix: '',
    });
    const signed = await dead.signAnchor(rootOf(9), 0n, fee);
    const r = await dead.broadcast(signed.raw);
    expect(r).toMatchObject({ ok: false, kind: 'unreachable' });
    expect(r.ok ? '' : r.reason).toMatch(/ECONNREFUSED/);
    await expect(dead.getStatus(signed.txHash)).rejects.toThrow();
  });

  it('classifies rejection bodies it has not seen from the devnet', () => {
    // stacks-core's TooMuchChaining (MemPoolRejection::into_json): its max nonce is `expected`.
    const chaining = {
      reason: 'TooMuchChaining',
      reason_data: {
        message: 'Nonce would exceed chaining limit in mempool',
        expected: 26,
        actual: 30,
        is_origin: true,
      },
    };
    expect(classifyRejection(JSON.stringify(chaining))).toMatchObject({
      kind: 'rejected',
    });
    expect(classifyRejection('not json')).toMatchObject({ kind: 'rejected', reason: 'not json' });
  });
});

/** A virtual clock for the request budget: `sleep` moves it instead of waiting. */
function virtualClock() {
  let t = Date.parse('2026-07-01T00:00:00Z');
  const slept: number[] = [];
  return {
    slept,
    now: () => t,
    sleep: async (ms: number) => {
      slept.push(ms);
      t += ms;
    },
  };
}

describe('StacksNotaryChain on each kind of Stacks API (devnet switches)', () => {
  let dev: StacksDevnet;
  const chainOn = (url: string, more: Partial<StacksNotaryConfig> = {}) =>
    new StacksNotaryChain({
      apiUrl: url,
      privateKey: dev.senderKey,
      contractId: dev.contractId,
      network: 'devnet',
      explorerTxPrefix: '',
      ...more,
    });
  /** Signs and sends an anchor of `root` at the chain's next nonce. */
  const send = async (chain: StacksNotaryChain, root: Uint8Array, f = fee) => {
    const signed = await chain.signAnchor(root, await chain.chainNonce(), f);
    expect(await chain.broadcast(signed.raw)).toEqual({ ok: true });
    return signed;
  };
  /** Sends an anchor of `root`: pending, then included with one confirmation in the block mined next. */
  const sendIncluded = async (chain: StacksNotaryChain, root: Uint8Array) => {
    const signed = await send(chain, root);
    expect(await chain.getStatus(signed.txHash)).toEqual({ state: 'pending' });
    const height = dev.mine();
    expect(await chain.getStatus(signed.txHash)).toEqual({
      state: 'included',
      blockNumber: BigInt(height),
      confirmations: 1,
      anchoredRoot: hex(root),
    });
    return signed;
  };
  beforeAll(async () => {
    dev = await startStacksDevnet({ blockTimeMs: 0 });
  });
  afterEach(() => {
    dev.configure({ kind: 'hiro', v1Gone: false, indexerLagBlocks: 0, rateLimit: null });
  });
  afterAll(async () => {
    await dev.stop();
  });

  it('auto detects Hiro v3 and reads the transaction through /extended/v3 with include', async () => {
    const chain = chainOn(dev.url);
    expect(await chain.probe()).toMatch(
      /^Stacks API http:\/\/127\.0\.0\.1:\d+: a Hiro API with \/extended\/v3 routes \(hiro-v3\) \(detected\), network_id 0x80000000/,
    );
    const signed = await sendIncluded(chain, rootOf(0x31));
    const paths = dev.requests().map((r) => r.path);
    expect(paths).toContain(`/extended/v3/transactions/${signed.txHash}?include=function_args,result`);
    expect(paths.some((p) => p.startsWith('/extended/v1/'))).toBe(false);
  });

  it('hiro-v1: canonical read; a transaction orphaned by a fork is not included; a 410 later is unavailability', async () => {
    const chain = chainOn(dev.url, { apiKind: 'hiro-v1' });
    expect(await chain.probe()).toMatch(/hiro-v1\) \(checked\)/);
    const signed = await send(chain, rootOf(0x32));
    dev.mine();
    expect(await chain.getStatus(signed.txHash)).toMatchObject({ state: 'included' });
    dev.markNonCanonical(signed.txHash);
    expect(await chain.getStatus(signed.txHash)).toEqual({ state: 'unknown' });
    dev.markNonCanonical(signed.txHash, { restored: true });
    expect(await chain.getStatus(signed.txHash)).toEqual({ state: 'pending' });
    dev.configure({ v1Gone: true });
    await expect(chain.getStatus(signed.txHash)).rejects.toMatchObject({ reason: 'gone' });
    await expect(chain.probe()).rejects.toThrow(
      /^STACKS_API_KIND=hiro-v1, but http:\/\/127\.0\.0\.1:\d+ answers 410 Gone .*set STACKS_API_KIND=hiro-v3 \(or auto\)/,
    );
    // In auto mode the same endpoint is read through v3.
    expect(await chainOn(dev.url).getStatus(signed.txHash)).toMatchObject({ state: 'pending' });
  });

  it('a replaced transaction: pending while its replacement is ours, failed when another root took its nonce', async () => {
    const chain = chainOn(dev.url, { apiKind: 'hiro-v1' });
    const signed = await send(chain, rootOf(0x33));
    const replacement = dev.replaceByFee(signed.txHash);
    expect(await chain.getStatus(signed.txHash)).toEqual({ state: 'pending' });
    dev.mine();
    expect(await chain.getStatus(signed.txHash)).toEqual({ state: 'pending' });
    expect(await chain.getStatus(`0x${replacement}`)).toMatchObject({
      state: 'included',
      anchoredRoot: hex(rootOf(0x33)),
    });

    // Another root at the same nonce, with a higher fee: this batch's transaction lost its nonce.
    const nonce = await chain.chainNonce();
    const mine = await chain.signAnchor(rootOf(0x34), nonce, fee);
    expect(await chain.broadcast(mine.raw)).toEqual({ ok: true });
    const other = await chain.signAnchor(rootOf(0x35), nonce, { maxFee: 5000n, priorityFee: 0n });
    expect(await chain.broadcast(other.raw)).toEqual({ ok: true });
    expect(await chain.getStatus(mine.txHash)).toMatchObject({
      state: 'failed',
      reason: expect.stringMatching(
        /^dropped_replace_by_fee: replaced by 0x[0-9a-f]{64}, not one anchoring this root/,
      ),
    });
    dev.mine();
  });

  it('a bare node: inclusion through get-anchor and the account nonce; an aborted call is failed', async () => {
    dev.configure({ kind: 'node' });
    const from = dev.requests().length;
    const chain = chainOn(dev.url);
    expect(await chain.probe()).toMatch(/a stacks-node without a Hiro API \(node\) \(detected\)/);
    const signed = await sendIncluded(chain, rootOf(0x36));
    dev.mine(2);
    expect(await chain.getStatus(signed.txHash)).toMatchObject({ confirmations: 3 });
    // `(err u100)`: the nonce is used and the root has no record.
    const aborted = await chain.signAnchorUnchecked(rootOf(0x37, 31), await chain.chainNonce(), fee);
    expect(await chain.broadcast(aborted.raw)).toEqual({ ok: true });
    dev.mine();
    expect(await chain.getStatus(aborted.txHash)).toMatchObject({
      state: 'failed',
      reason: expect.stringMatching(/^nonce \d+ was used and 0x(37){31} has no record/),
    });
    // A transaction this instance never signed nor sent: nothing to read it by on a node.
    expect(await chain.getStatus(`0x${'ee'.repeat(32)}`)).toEqual({ state: 'unknown' });
    // Only the detection asked for /extended (a stacks-node's 404); every read went to the node's routes.
    expect(
      dev
        .requests()
        .slice(from)
        .filter((r) => r.path.startsWith('/extended')),
    ).toMatchObject([{ path: '/extended', status: 404 }]);
    await expect(chainOn(dev.url, { apiKind: 'hiro-v3' }).probe()).rejects.toThrow(
      /^STACKS_API_KIND=hiro-v3, but http:\/\/127\.0\.0\.1:\d+ is a stacks-node without a Hiro API \(node\) .*: set STACKS_API_KIND=node \(or auto\)/,
    );
  });

  it('an indexer lagging behind its node: the nonce from the node, inclusion once the index has the block', async () => {
    dev.configure({ indexerLagBlocks: 3 });
    const chain = chainOn(dev.indexerUrl);
    const first = await send(chain, rootOf(0x38));
    dev.mine();
    // The index has not seen the block: the node's nonce is past the indexer's, and the transaction is pending.
    expect(await chain.getStatus(first.txHash)).toEqual({ state: 'pending' });
    const second = await send(chain, rootOf(0x39));
    expect(second.nonce).toBe(first.nonce + 1n);
    dev.mine(3);
    expect(await chain.getStatus(first.txHash)).toMatchObject({ state: 'included', confirmations: 4 });
  });

  it('429: the budget waits Retry-After and sends again; past the wait the pipeline is told to pause', async () => {
    const clock = virtualClock();
    const chain = chainOn(dev.url, { clock, maxWaitMs: 10_000 });
    await chain.probe();
    dev.configure({ rateLimit: { next: 2, retryAfterSeconds: 3 } });
    const signed = await send(chain, rootOf(0x3a));
    expect(clock.slept).toEqual([3000, 3000]);
    dev.configure({ rateLimit: { next: 10, retryAfterSeconds: 120 } });
    const err = await chain.getStatus(signed.txHash).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChainRateLimitedError);
    expect(err).toMatchObject({ retryAfterMs: 120_000, message: expect.stringMatching(/HTTP 429/) });
    // The client is paused: a broadcast meanwhile is not sent.
    const before = dev.requests().length;
    expect(await chain.broadcast(signed.raw)).toMatchObject({ ok: false, kind: 'rate-limited' });
    expect(dev.requests().length).toBe(before);
    dev.mine();
  });

  it('the request budget paces every caller of one adapter; the API key goes as x-api-key and never into errors', async () => {
    const clock = virtualClock();
    const key = 'hiro-api-key-0123456789abcdef';
    const chain = chainOn(dev.url, { clock, apiRpm: 60, apiKey: key, maxWaitMs: 60_000 });
    await Promise.all(Array.from({ length: 8 }, () => chain.chainNonce()));
    // Detection and two reads per caller, through one budget: a burst of 6 (rpm/10), then one a second.
    const sent = dev.requests().filter((r) => r.apiKey === key);
    expect(sent.length).toBeGreaterThanOrEqual(16);
    expect(clock.now() - Date.parse('2026-07-01T00:00:00Z')).toBe((sent.length - 6) * 1000);
    dev.configure({ v1Gone: true, kind: 'node' });
    const err = await chainOn(dev.url, { apiKey: key, apiKind: 'hiro-v1' })
      .getStatus(`0x${'ab'.repeat(32)}`)
      .catch((e: unknown) => e);
    expect(String(err)).not.toContain(key);
  });

  it('refuses a node of another network, naming the URL without its credentials', async () => {
    const mainnetKey = randomPrivateKey();
    const chain = new StacksNotaryChain({
      apiUrl: dev.url.replace('://', '://operator:pa55word@'),
      privateKey: mainnetKey,
      contractId: `${privateKeyToAddress(mainnetKey, 'mainnet')}.notary`,
      network: 'mainnet',
      explorerTxPrefix: '',
    });
    const err = await chain.probe().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StacksConfigError);
    expect(String(err)).toMatch(
      /STACKS_NETWORK=mainnet expects network_id 0x00000001, but http:\/\/\*\*\*@127\.0\.0\.1:\d+ answers 0x80000000 \(testnet or a devnet\)/,
    );
    expect(String(err)).not.toContain('pa55word');
  });
});
