import { Contract, JsonRpcProvider, Network, Wallet } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVNET_EAS_CONTRACTS, EAS_SCHEMA_UID } from '../../ports/chains';
import { schemaRegistryAbi } from './eas-abi';
import { type HardhatDevnet, startHardhatDevnet, startLazyHardhatDevnet } from './hardhat-devnet';

describe('startHardhatDevnet', () => {
  let devnet: HardhatDevnet;
  let provider: JsonRpcProvider;

  beforeAll(async () => {
    devnet = await startHardhatDevnet();
    provider = new JsonRpcProvider(devnet.rpcUrl, Network.from(devnet.chainId), {
      staticNetwork: true,
      cacheTimeout: -1,
    });
  });
  afterAll(async () => {
    provider?.destroy();
    await devnet?.stop();
  });

  it('serves JSON-RPC on a free loopback port with EAS and SchemaRegistry deployed', async () => {
    expect(devnet.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(Number((await provider.getNetwork()).chainId)).toBe(31337);
    expect((await provider.getCode(devnet.easAddress)).length).toBeGreaterThan(2);
    expect((await provider.getCode(devnet.schemaRegistryAddress)).length).toBeGreaterThan(2);
    const registry = new Contract(devnet.schemaRegistryAddress, schemaRegistryAbi(), provider);
    expect(await registry.getFunction('getSchema').staticCall(`0x${'00'.repeat(32)}`)).toBeTruthy();
    // EAS reports its registry (view from the full artifact ABI is not needed: the deploy arg is checked here).
    const eas = new Contract(
      devnet.easAddress,
      ['function getSchemaRegistry() view returns (address)'],
      provider,
    );
    expect(await eas.getFunction('getSchemaRegistry').staticCall()).toBe(devnet.schemaRegistryAddress);
  });

  it('mines, snapshots and reverts', async () => {
    const start = await devnet.blockNumber();
    const id = await devnet.snapshot();
    await devnet.mine(5);
    expect(await devnet.blockNumber()).toBe(start + 5);
    expect(await devnet.revert(id)).toBe(true);
    expect(await devnet.blockNumber()).toBe(start);
    await devnet.setAutomine(false);
    await devnet.setAutomine(true);
  });

  it('production conditions on demand: base fee, block time, dropped transactions, block hashes', async () => {
    const wallet = new Wallet(devnet.funderPrivateKey, provider);
    await devnet.setAutomine(false);
    try {
      const sent = await wallet.sendTransaction({ to: wallet.address, value: 0n });
      expect(await provider.getTransaction(sent.hash)).not.toBeNull();
      expect(await devnet.dropTransaction(sent.hash)).toBe(true);
      expect(await provider.getTransaction(sent.hash)).toBeNull();
      expect(await devnet.dropTransaction(sent.hash)).toBe(false);
    } finally {
      await devnet.setAutomine(true);
    }
    await devnet.setNextBlockBaseFee(123_000_000_000n);
    const head = await provider.getBlock('latest');
    await devnet.setNextBlockTimestamp((head?.timestamp ?? 0) + 1000);
    await devnet.mine(1);
    const block = await provider.getBlock('latest');
    expect(block?.baseFeePerGas).toBe(123_000_000_000n);
    expect(block?.timestamp).toBe((head?.timestamp ?? 0) + 1000);
    expect(await devnet.blockHash(block?.number ?? -1)).toBe(block?.hash);
    expect(await devnet.blockHash((block?.number ?? 0) + 10)).toBeUndefined();
    expect(await devnet.request('eth_chainId')).toBe('0x7a69');
    await expect(devnet.request('no_such_method')).rejects.toThrow();
  });

  it('interval mining keeps producing blocks with no traffic', async () => {
    const ticking = await startHardhatDevnet({ intervalMs: 100 });
    try {
      const start = await ticking.blockNumber();
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(await ticking.blockNumber()).toBeGreaterThan(start + 1);
    } finally {
      await ticking.stop();
    }
  });

  it('stops and frees its port (and stop is idempotent)', async () => {
    const other = await startHardhatDevnet();
    await other.stop();
    await other.stop();
    await expect(fetch(other.rpcUrl, { method: 'POST' })).rejects.toThrow();
  });
});

describe("Hardhat devnet started on first use (the service's ANCHORING=devnet)", () => {
  const rpc = async (url: string, method: string, params: unknown[] = []) => {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return ((await res.json()) as { result: unknown }).result;
  };

  it('listens at once with its EAS addresses known, starts on the first JSON-RPC request, schema registered', async () => {
    const dev = await startLazyHardhatDevnet();
    try {
      expect(dev.started()).toBe(false);
      expect(dev.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      // The default funder's deployments, as receipts name them.
      expect(dev.funderAddress).toBe(DEVNET_EAS_CONTRACTS.deployer);
      expect(dev.schemaRegistryAddress).toBe(DEVNET_EAS_CONTRACTS.schemaRegistry);
      expect(dev.easAddress).toBe(DEVNET_EAS_CONTRACTS.eas);
      expect(dev.started()).toBe(false);

      expect(await rpc(dev.rpcUrl, 'eth_chainId')).toBe('0x7a69');
      expect(dev.started()).toBe(true);
      // EAS is where it was announced, and knows the registry announced with it, which holds the schema.
      expect(String(await rpc(dev.rpcUrl, 'eth_getCode', [dev.easAddress, 'latest'])).length).toBeGreaterThan(
        2,
      );
      const provider = new JsonRpcProvider(dev.rpcUrl, Network.from(dev.chainId), { staticNetwork: true });
      try {
        const eas = new Contract(
          dev.easAddress,
          ['function getSchemaRegistry() view returns (address)'],
          provider,
        );
        expect(await eas.getFunction('getSchemaRegistry').staticCall()).toBe(dev.schemaRegistryAddress);
        const registry = new Contract(dev.schemaRegistryAddress, schemaRegistryAbi(), provider);
        const schema = (await registry.getFunction('getSchema').staticCall(EAS_SCHEMA_UID)) as {
          uid: string;
        };
        expect(schema.uid).toBe(EAS_SCHEMA_UID);
        // SchemaRegistry, EAS, then the schema: the funder's next transaction is its nonce 3.
        expect(await provider.getTransactionCount(dev.funderAddress, 'pending')).toBe(3);
      } finally {
        provider.destroy();
      }
    } finally {
      await dev.stop();
    }
  });

  it('a method starts it too; stopped before any use, it never starts', async () => {
    const used = await startLazyHardhatDevnet({ funderPrivateKey: Wallet.createRandom().privateKey });
    try {
      const start = await used.blockNumber();
      await used.mine(2);
      expect(await used.blockNumber()).toBe(start + 2);
      expect(used.started()).toBe(true);
      // Another funder: the addresses computed up front are still where EAS landed.
      expect(await used.request('eth_getCode', [used.easAddress, 'latest'])).not.toBe('0x');
    } finally {
      await used.stop();
    }
    const unused = await startLazyHardhatDevnet();
    await unused.stop();
    expect(unused.started()).toBe(false);
    await expect(unused.snapshot()).rejects.toThrow(/stopped/);
    await expect(fetch(unused.rpcUrl, { method: 'POST' })).rejects.toThrow();
  });
});
