import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { ContractFactory, computeAddress, getCreateAddress, JsonRpcProvider, Network, Wallet } from 'ethers';
import type { EIP1193Provider } from 'hardhat/types';
import { DEVNET_EVM_NETWORK } from '../../ports/chains';
import { easArtifacts } from './eas-abi';
import { EvmEasChain } from './evm-eas';
import { callsAfterStart, type LazyDevnet, startLazyDevnet } from './lazy-endpoint';

/**
 * Local EVM devnet for the embedded default and the tests: a Hardhat Network (Hardhat 2.29, EDR) in this process,
 * served over JSON-RPC HTTP on 127.0.0.1 at a free port (port 0), with SchemaRegistry and EAS deployed from the
 * `@ethereum-attestation-service/eas-contracts` 1.9.0 artifacts (abi + bytecode, no compilation).
 *
 * No child process: the node lives and dies with this process; `stop()` closes the HTTP server and frees the
 * port. Its state is memory only: every start is a fresh chain (chain id 31337 by default).
 *
 * Uses Hardhat internals (`hardhat/internal/...`: the same calls `hardhat node` makes), since Hardhat 2 has no
 * public API to run a node without a project config file. Pinned exact; re-check on upgrade. They are loaded
 * by the start, not with this module: the service's devnet (`startLazyHardhatDevnet`) holds them only once
 * something used it.
 */

/** Hardhat's well-known account #0 (mnemonic "test test ... junk"): public, for local devnets only. */
export const HARDHAT_DEFAULT_PRIVATE_KEY =
  '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

export interface HardhatDevnetOptions {
  /** Default 31337. */
  chainId?: number;
  /** Key of the single funded account (10,000 ETH). Default: `HARDHAT_DEFAULT_PRIVATE_KEY`. */
  funderPrivateKey?: string;
  /**
   * Also mine an empty block every `intervalMs` milliseconds (Hardhat interval mining), so confirmations keep
   * growing with no traffic. Default 0: only automine (one block per transaction).
   */
  intervalMs?: number;
}

export interface HardhatDevnet {
  /** `http://127.0.0.1:<port>`. */
  rpcUrl: string;
  chainId: number;
  funderPrivateKey: string;
  funderAddress: string;
  easAddress: string;
  schemaRegistryAddress: string;
  /** `evm_snapshot`: returns the snapshot id (hex quantity). */
  snapshot(): Promise<string>;
  /** `evm_revert`: back to the snapshot (blocks, receipts and mempool); the id is consumed. False if unknown. */
  revert(id: string): Promise<boolean>;
  /** Mines `n` blocks (default 1), pending transactions included in the first. */
  mine(n?: number): Promise<void>;
  /** `evm_setAutomine`: off leaves sent transactions in the mempool until `mine()`. */
  setAutomine(on: boolean): Promise<void>;
  /** Current block number. */
  blockNumber(): Promise<number>;
  /** Hash of the canonical block at `height` (`eth_getBlockByNumber`), undefined above the head. */
  blockHash(height: number): Promise<string | undefined>;
  /**
   * `hardhat_setNextBlockBaseFeePerGas`, in wei: a transaction whose maxFeePerGas is below it is left out of
   * the next block (in the mempool with automine off; refused "too low for the next block" with automine on).
   */
  setNextBlockBaseFee(wei: bigint): Promise<void>;
  /** `evm_setNextBlockTimestamp`, in seconds since the epoch (must be later than the head's). */
  setNextBlockTimestamp(seconds: number): Promise<void>;
  /** `hardhat_dropTransaction`: removes a pending transaction from the mempool; false when it was not there. */
  dropTransaction(txHash: string): Promise<boolean>;
  /** Any other JSON-RPC method, in process (no HTTP): its result, or the node's error thrown. */
  request(method: string, params?: unknown[]): Promise<unknown>;
  /** Closes the JSON-RPC server (idempotent). */
  stop(): Promise<void>;
}

const FUNDER_BALANCE_WEI = (10_000n * 10n ** 18n).toString();

/**
 * Starts the devnet and deploys SchemaRegistry then EAS(registry) from the funder (nonces 0 and 1, so with the
 * default key the addresses are always the same). Takes about 1-2 s.
 * Throws if Hardhat or the EAS artifacts cannot be loaded or a deployment fails (the server is closed then).
 */
export async function startHardhatDevnet(options: HardhatDevnetOptions = {}): Promise<HardhatDevnet> {
  const chainId = options.chainId ?? 31337;
  const funderPrivateKey = options.funderPrivateKey ?? HARDHAT_DEFAULT_PRIVATE_KEY;
  const [{ resolveConfig }, { createProvider }, { JsonRpcServer }] = await Promise.all([
    import('hardhat/internal/core/config/config-resolution.js'),
    import('hardhat/internal/core/providers/construction.js'),
    import('hardhat/internal/hardhat-network/jsonrpc/server.js'),
  ]);
  // resolveConfig needs an existing file path to derive project paths from (only the fork cache would use them).
  const config = resolveConfig(fileURLToPath(import.meta.url), {
    networks: {
      hardhat: {
        chainId,
        accounts: [{ privateKey: funderPrivateKey, balance: FUNDER_BALANCE_WEI }],
        mining: { auto: true, interval: options.intervalMs ?? 0 },
        loggingEnabled: false,
      },
    },
  });
  const node: EIP1193Provider = await createProvider(config, 'hardhat');
  const server = new JsonRpcServer({ hostname: '127.0.0.1', port: 0, provider: node });
  const { port } = await server.listen();
  // As the Stacks devnet: no idle timeout on kept-alive loopback connections (its HTTP server is internal too).
  (server as unknown as { _httpServer: Server })._httpServer.keepAliveTimeout = 0;
  const rpcUrl = `http://127.0.0.1:${port}`;
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await server.close();
  };

  const provider = new JsonRpcProvider(rpcUrl, Network.from(chainId), {
    staticNetwork: true,
    cacheTimeout: -1,
  });
  try {
    const wallet = new Wallet(funderPrivateKey, provider);
    const { eas, schemaRegistry } = easArtifacts();
    const registry = await new ContractFactory(schemaRegistry.abi, schemaRegistry.bytecode, wallet).deploy();
    await registry.waitForDeployment();
    const schemaRegistryAddress = await registry.getAddress();
    const easContract = await new ContractFactory(eas.abi, eas.bytecode, wallet).deploy(
      schemaRegistryAddress,
    );
    await easContract.waitForDeployment();
    const easAddress = await easContract.getAddress();

    return {
      rpcUrl,
      chainId,
      funderPrivateKey,
      funderAddress: wallet.address,
      easAddress,
      schemaRegistryAddress,
      snapshot: async () => String(await node.request({ method: 'evm_snapshot' })),
      revert: async (id) => (await node.request({ method: 'evm_revert', params: [id] })) === true,
      mine: async (n = 1) => {
        await node.request({ method: 'hardhat_mine', params: [`0x${n.toString(16)}`] });
      },
      setAutomine: async (on) => {
        await node.request({ method: 'evm_setAutomine', params: [on] });
      },
      blockNumber: async () => Number(BigInt(String(await node.request({ method: 'eth_blockNumber' })))),
      blockHash: async (height) => {
        const block = (await node.request({
          method: 'eth_getBlockByNumber',
          params: [`0x${height.toString(16)}`, false],
        })) as { hash?: string } | null;
        return block?.hash ?? undefined;
      },
      setNextBlockBaseFee: async (wei) => {
        await node.request({
          method: 'hardhat_setNextBlockBaseFeePerGas',
          params: [`0x${wei.toString(16)}`],
        });
      },
      setNextBlockTimestamp: async (seconds) => {
        await node.request({ method: 'evm_setNextBlockTimestamp', params: [seconds] });
      },
      dropTransaction: async (txHash) =>
        (await node.request({ method: 'hardhat_dropTransaction', params: [txHash] })) === true,
      request: (method, params = []) => node.request({ method, params }),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  } finally {
    provider.destroy();
  }
}

/** The addresses of a devnet's EAS contracts. */
export type DevnetEasAddresses = Pick<HardhatDevnet, 'schemaRegistryAddress' | 'easAddress'>;

/** Where SchemaRegistry and EAS of a devnet funded by `funderAddress` are: its deployments at nonces 0 and 1. */
export function devnetEasAddresses(funderAddress: string): DevnetEasAddresses {
  return {
    schemaRegistryAddress: getCreateAddress({ from: funderAddress, nonce: 0 }),
    easAddress: getCreateAddress({ from: funderAddress, nonce: 1 }),
  };
}

/** The Hardhat devnet of `startLazyHardhatDevnet`: the devnet's surface, and whether it has started yet. */
export type LazyHardhatDevnet = HardhatDevnet & {
  /** True once a JSON-RPC connection or a method call has started the devnet. */
  started(): boolean;
};

/** The `HardhatDevnet` methods that start the lazy devnet and then run on it. */
const DEVNET_METHODS = [
  'snapshot',
  'revert',
  'mine',
  'setAutomine',
  'blockNumber',
  'blockHash',
  'setNextBlockBaseFee',
  'setNextBlockTimestamp',
  'dropTransaction',
  'request',
] as const satisfies readonly (keyof HardhatDevnet)[];
type DevnetMethod = (typeof DEVNET_METHODS)[number];

/**
 * The service's EVM devnet (`ANCHORING=devnet`), started on its first use: Hardhat's modules, EDR and the chain
 * hold about 35 MB that a service which has not anchored anything yet does not need. Its JSON-RPC address
 * listens from the start (`lazy-endpoint.ts`); the first connection to it, or the first method call, starts the
 * devnet (`startHardhatDevnet`) and registers the notary's EAS schema on it (`EvmEasChain.ensureSchema`, the
 * funder's nonce 2), so the anchoring finds the chain ready at its first read. The EAS and SchemaRegistry
 * addresses are known before the start (the funder's deployments at nonces 0 and 1, `devnetEasAddresses`); a
 * start that deploys them elsewhere fails. A failed start is reported to `onStartError` and the connection
 * closed, as a node that is down; the next use tries again.
 */
export async function startLazyHardhatDevnet(
  options: HardhatDevnetOptions = {},
  onStartError: (e: unknown) => void = () => {},
): Promise<LazyHardhatDevnet> {
  const chainId = options.chainId ?? 31337;
  const funderPrivateKey = options.funderPrivateKey ?? HARDHAT_DEFAULT_PRIVATE_KEY;
  const funderAddress = computeAddress(funderPrivateKey);
  const addresses = devnetEasAddresses(funderAddress);
  const lazy: LazyDevnet<HardhatDevnet, 'rpc'> = await startLazyDevnet(
    () => startWithSchema({ ...options, chainId, funderPrivateKey }, addresses),
    { rpc: (d) => d.rpcUrl },
    onStartError,
  );
  const methods = callsAfterStart(lazy, DEVNET_METHODS, (d) => d) as unknown as Pick<
    HardhatDevnet,
    DevnetMethod
  >;
  return {
    rpcUrl: lazy.urls.rpc,
    chainId,
    funderPrivateKey,
    funderAddress,
    ...addresses,
    ...methods,
    started: () => lazy.started(),
    stop: () => lazy.stop(),
  };
}

/** `startHardhatDevnet`, checked against the addresses announced before it, then the notary schema registered. */
async function startWithSchema(
  options: HardhatDevnetOptions & { chainId: number; funderPrivateKey: string },
  expected: DevnetEasAddresses,
): Promise<HardhatDevnet> {
  const devnet = await startHardhatDevnet(options);
  try {
    if (
      devnet.easAddress !== expected.easAddress ||
      devnet.schemaRegistryAddress !== expected.schemaRegistryAddress
    ) {
      throw new Error(
        `the EVM devnet deployed EAS at ${devnet.easAddress} and SchemaRegistry at ${devnet.schemaRegistryAddress}, not at the announced ${expected.easAddress} and ${expected.schemaRegistryAddress}`,
      );
    }
    const chain = new EvmEasChain({
      rpcUrl: devnet.rpcUrl,
      privateKey: devnet.funderPrivateKey,
      easAddress: devnet.easAddress,
      schemaRegistryAddress: devnet.schemaRegistryAddress,
      network: DEVNET_EVM_NETWORK.network,
      chainId: devnet.chainId,
      explorerTxPrefix: '',
      attestationScanPrefix: '',
    });
    try {
      await chain.ensureSchema();
    } finally {
      chain.close();
    }
    return devnet;
  } catch (e) {
    await devnet.stop();
    throw e;
  }
}
