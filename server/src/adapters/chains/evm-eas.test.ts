import { createHash } from 'node:crypto';
import { errorMessage } from '@notary/shared';
import { Contract } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildMerkleTree, hashFromHex, toHex, verifyMerkleProof } from '../../domain/anchoring/merkle';
import { hardhatEasConfig } from '../../jobs/evm-pipeline.testing';
import { ChainRateLimitedError, EAS_SCHEMA_UID, type TxStatus } from '../../ports/chains';
import { easAbi } from './eas-abi';
import { classifyRefusal, EvmEasChain, type EvmEasConfig } from './evm-eas';
import { type HardhatDevnet, startHardhatDevnet } from './hardhat-devnet';
import { startRpcProxy } from './rpc-proxy.testing';

const docs = (n: number, tag: string): Uint8Array[] =>
  Array.from({ length: n }, (_, i) => new Uint8Array(createHash('sha256').update(`${tag} ${i}`).digest()));

type Included = Extract<TxStatus, { state: 'included' }>;
function included(s: TxStatus): Included {
  if (s.state !== 'included') throw new Error(`expected included, got ${JSON.stringify(s)}`);
  return s;
}

describe('EvmEasChain against Hardhat with the real EAS contracts', () => {
  let devnet: HardhatDevnet;
  let chain: EvmEasChain;
  let config: EvmEasConfig;

  beforeAll(async () => {
    devnet = await startHardhatDevnet();
    config = hardhatEasConfig(devnet);
    chain = new EvmEasChain(config);
  });
  afterAll(async () => {
    chain?.close();
    await devnet?.stop();
  });

  /** Signs and broadcasts an anchor of `root` at the chain's next nonce; returns the tx hash. */
  async function anchor(root: Uint8Array): Promise<string> {
    const signed = await chain.signAnchor(root, await chain.chainNonce(), await chain.suggestFees());
    expect(await chain.broadcast(signed.raw)).toEqual({ ok: true });
    return signed.txHash;
  }

  it('registers the schema once (UID = keccak256(schema, resolver, revocable))', async () => {
    const first = await chain.ensureSchema();
    expect(first).toMatchObject({ uid: EAS_SCHEMA_UID, registered: true });
    expect(await chain.ensureSchema()).toEqual({ uid: EAS_SCHEMA_UID, registered: false });
    expect(() => new EvmEasChain({ ...config, schemaUid: `0x${'11'.repeat(32)}` })).toThrow(/not the UID/);
    expect(new EvmEasChain({ ...config, schemaUid: EAS_SCHEMA_UID }).info().network).toBe('hardhat');
  });

  it('anchors a Merkle root: read back by UID it holds the root, and every proof recomputes it', async () => {
    const leaves = docs(7, 'batch');
    const tree = buildMerkleTree(leaves);
    const hash = await anchor(tree.root);
    const status = included(await chain.getStatus(hash));
    expect(status.confirmations).toBe(1);
    expect(status.anchoredRoot).toBe(`0x${toHex(tree.root)}`);
    // Independent read-back by UID with the EAS ABI.
    const eas = new Contract(devnet.easAddress, easAbi(), chain.provider);
    const att = (await eas.getFunction('getAttestation').staticCall(status.attestationUid)) as {
      schema: string;
      attester: string;
      revocable: boolean;
      data: string;
    };
    expect(att.schema).toBe(EAS_SCHEMA_UID);
    expect(att.attester).toBe(chain.address);
    expect(att.revocable).toBe(false);
    expect(att.data).toBe(`0x${toHex(tree.root)}`);
    const anchored = hashFromHex(status.anchoredRoot);
    tree.proofs.forEach((proof, i) => {
      expect(verifyMerkleProof(leaves[i] as Uint8Array, proof, anchored)).toBe(true);
    });
    await devnet.mine(2);
    expect(included(await chain.getStatus(hash)).confirmations).toBe(3);
  });

  it('a batch of one anchors the document hash itself', async () => {
    const [doc] = docs(1, 'single') as [Uint8Array];
    const { root, proofs } = buildMerkleTree([doc]);
    const status = included(await chain.getStatus(await anchor(root)));
    expect(status.anchoredRoot).toBe(`0x${toHex(doc)}`);
    expect(
      verifyMerkleProof(doc, proofs[0] ?? { index: 0, siblings: [] }, hashFromHex(status.anchoredRoot)),
    ).toBe(true);
  });

  it('classifies nonce too low, and re-broadcasting the same bytes is harmless', async () => {
    const fees = await chain.suggestFees();
    const nonce = await chain.chainNonce();
    const stale = await chain.signAnchor(docs(1, 'stale')[0] as Uint8Array, nonce - 1n, fees);
    const refused = await chain.broadcast(stale.raw);
    expect(refused).toMatchObject({ ok: false, kind: 'nonce-too-low' });

    await devnet.setAutomine(false);
    try {
      const signed = await chain.signAnchor(docs(1, 'resend')[0] as Uint8Array, nonce, fees);
      expect(await chain.broadcast(signed.raw)).toEqual({ ok: true });
      expect(await chain.getStatus(signed.txHash)).toEqual({ state: 'pending' });
      const again = await chain.broadcast(signed.raw);
      expect(again.ok || again.kind === 'already-known').toBe(true);
      await devnet.mine(1);
      included(await chain.getStatus(signed.txHash));
      // After inclusion, the same bytes are refused as a stale nonce: no second attestation.
      const late = await chain.broadcast(signed.raw);
      expect(late.ok).toBe(false);
      expect(await chain.chainNonce()).toBe(nonce + 1n);
    } finally {
      await devnet.setAutomine(true);
    }
  });

  it('replaces a stuck transaction with the same nonce and a higher fee', async () => {
    await devnet.setAutomine(false);
    try {
      const nonce = await chain.chainNonce();
      const fees = await chain.suggestFees();
      const root = docs(1, 'stuck')[0] as Uint8Array;
      const stuck = await chain.signAnchor(root, nonce, fees);
      expect(await chain.broadcast(stuck.raw)).toEqual({ ok: true });
      const same = await chain.signAnchor(docs(1, 'same-fee')[0] as Uint8Array, nonce, fees);
      expect(await chain.broadcast(same.raw)).toMatchObject({ ok: false, kind: 'underpriced' });
      const bumped = { maxFee: fees.maxFee * 2n, priorityFee: fees.priorityFee * 2n };
      const replacement = await chain.signAnchor(root, nonce, bumped);
      expect(await chain.broadcast(replacement.raw)).toEqual({ ok: true });
      await devnet.mine(1);
      expect(await chain.getStatus(stuck.txHash)).toEqual({ state: 'unknown' });
      expect(included(await chain.getStatus(replacement.txHash)).anchoredRoot).toBe(`0x${toHex(root)}`);
    } finally {
      await devnet.setAutomine(true);
    }
  });

  it('a receipt that disappears (snapshot/revert, as a reorg) reads back unknown', async () => {
    const id = await devnet.snapshot();
    const hash = await anchor(docs(1, 'reorg')[0] as Uint8Array);
    included(await chain.getStatus(hash));
    expect(await devnet.revert(id)).toBe(true);
    expect(await chain.getStatus(hash)).toEqual({ state: 'unknown' });
  });

  it('reports an unreachable node without throwing', async () => {
    const other = await startHardhatDevnet();
    const url = other.rpcUrl;
    await other.stop();
    const down = new EvmEasChain({ ...config, rpcUrl: url, gasLimit: 300_000n });
    try {
      const signed = await down.signAnchor(new Uint8Array(32), 0n, { maxFee: 10n ** 9n, priorityFee: 1n });
      const res = await down.broadcast(signed.raw);
      expect(res).toMatchObject({ ok: false, kind: 'unreachable' });
      if (!res.ok) expect(res.reason).toMatch(/ECONNREFUSED|fetch failed/);
    } finally {
      down.close();
    }
  });

  it('classifies node wordings', () => {
    expect(classifyRefusal('Nonce too low. Expected nonce to be 5 but got 4.')).toBe('nonce-too-low');
    expect(classifyRefusal('already known')).toBe('already-known');
    expect(classifyRefusal('Known transaction: 0xabc')).toBe('already-known');
    expect(classifyRefusal('replacement transaction underpriced')).toBe('underpriced');
    // A fee cap under the next base fee wants a higher fee, not a refusal (Hardhat/EDR, geth).
    expect(
      classifyRefusal(
        'Transaction maxFeePerGas (2370546550) is too low for the next block, which has a baseFeePerGas of 23705465500',
      ),
    ).toBe('underpriced');
    expect(
      classifyRefusal('max fee per gas less than block base fee: address 0x1, maxFeePerGas: 1, baseFee: 2'),
    ).toBe('underpriced');
    expect(classifyRefusal('insufficient funds for gas * price + value')).toBe('rejected');
  });

  it('suggests fees for the next block: a base fee raised before any block shows it is counted', async () => {
    const before = await chain.suggestFees();
    const next = before.maxFee * 5n;
    await devnet.setNextBlockBaseFee(next);
    const after = await chain.suggestFees();
    expect(after.maxFee).toBe(2n * next + after.priorityFee);
    expect(after.priorityFee).toBeGreaterThan(0n);
    await devnet.mine(1);
    // A transaction signed with them is mined in that block.
    included(await chain.getStatus(await anchor(docs(1, 'next base fee')[0] as Uint8Array)));
  });

  it('a 429 is one request (ethers does not retry it); until Retry-After has passed nothing is sent', async () => {
    let clock = 1_000_000;
    const proxy = await startRpcProxy(devnet.rpcUrl, { clock: () => clock });
    const limited = new EvmEasChain({
      ...config,
      rpcUrl: `${proxy.url}/v2/AbCdEf0123456789xyzAbCdEf`,
      rateLimit: { now: () => clock },
    });
    try {
      proxy.fault(1, { kind: 'answer', status: 429, headers: { 'retry-after': '7' }, body: 'slow down' });
      const first = await limited.chainNonce().catch((e: unknown) => e);
      expect(first).toBeInstanceOf(ChainRateLimitedError);
      expect((first as ChainRateLimitedError).retryAfterMs).toBe(7_000);
      expect(errorMessage(first)).toMatch(/HTTP 429, Retry-After: 7\): next call in 7 s/);
      expect(proxy.requests).toHaveLength(1);
      clock += 6_000;
      await expect(limited.getStatus(`0x${'00'.repeat(32)}`)).rejects.toMatchObject({
        name: 'ChainRateLimitedError',
        retryAfterMs: 1_000,
      });
      await expect(limited.suggestFees()).rejects.toBeInstanceOf(ChainRateLimitedError);
      const signed = await limited.signAnchor(new Uint8Array(32), 0n, { maxFee: 1n, priorityFee: 1n });
      expect(await limited.broadcast(signed.raw)).toMatchObject({
        ok: false,
        kind: 'rate-limited',
        retryAfterMs: 1_000,
      });
      expect(proxy.requests).toHaveLength(1); // nothing went out while waiting
      clock += 1_000;
      expect(await limited.chainNonce()).toBe(await chain.chainNonce());
      expect(proxy.requests.map((r) => r.answer)).toEqual(['answer', 'forwarded']);
      // 503 with Retry-After (an overloaded gateway) waits too; a 503 without it is an outage, not a limit.
      proxy.fault(1, { kind: 'answer', status: 503, headers: { 'retry-after': '2' }, body: '' });
      await expect(limited.chainNonce()).rejects.toMatchObject({ retryAfterMs: 2_000 });
      clock += 2_000;
      proxy.fault(1, { kind: 'answer', status: 503, body: 'bad gateway' });
      await expect(limited.chainNonce()).rejects.not.toBeInstanceOf(ChainRateLimitedError);
      expect(await limited.chainNonce()).toBe(await chain.chainNonce());
    } finally {
      limited.close();
      await proxy.close();
    }
  });

  it('credentials of a user:pass@ URL go as Basic authentication, for reads and for broadcasts alike', async () => {
    const proxy = await startRpcProxy(devnet.rpcUrl);
    const url = new URL(proxy.url);
    url.username = 'operator';
    url.password = 'pa55word-Secret';
    url.pathname = '/rpc';
    const authed = new EvmEasChain({ ...config, rpcUrl: url.toString() });
    try {
      const signed = await authed.signAnchor(
        docs(1, 'basic auth')[0] as Uint8Array,
        await authed.chainNonce(),
        await authed.suggestFees(),
      );
      expect(await authed.broadcast(signed.raw)).toEqual({ ok: true });
      included(await authed.getStatus(signed.txHash));
      const basic = `Basic ${Buffer.from('operator:pa55word-Secret').toString('base64')}`;
      expect(proxy.requests.length).toBeGreaterThan(3);
      for (const r of proxy.requests) expect(r).toMatchObject({ url: '/rpc', authorization: basic });
    } finally {
      authed.close();
      await proxy.close();
    }
  });

  it('measures gas: one attestation vs. a Merkle root for 1, 100 and 1000 documents', async () => {
    const rows: { documents: number; gasUsed: bigint; gasPerDocument: bigint }[] = [];
    for (const n of [1, 100, 1000]) {
      const { root } = buildMerkleTree(docs(n, `gas ${n}`));
      const hash = await anchor(root);
      const receipt = await chain.provider.getTransactionReceipt(hash);
      const gasUsed = receipt?.gasUsed ?? 0n;
      rows.push({ documents: n, gasUsed, gasPerDocument: gasUsed / BigInt(n) });
    }
    console.table(
      rows.map((r) => ({ ...r, gasUsed: Number(r.gasUsed), gasPerDocument: Number(r.gasPerDocument) })),
    );
    const single = rows[0]?.gasUsed ?? 0n;
    const thousand = rows[2];
    expect(single).toBeGreaterThan(0n);
    expect((thousand?.gasPerDocument ?? 0n) * 100n).toBeLessThan(single); // < 1% of one attestation
  });
});
