import { createServer } from 'node:net';
import { deserializeTransaction } from '@stacks/transactions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyRejection, StacksNotaryChain } from './stacks.js';
import { type StacksDevnet, startStacksDevnet } from './stacks-devnet.js';

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
    expect(classifyRejection('{"reason":"TooMuchChaining","reason_data":{"max_nonce":25}}')).toMatchObject({
      kind: 'rejected',
    });
    expect(classifyRejection('not json')).toMatchObject({ kind: 'rejected', reason: 'not json' });
  });
});
