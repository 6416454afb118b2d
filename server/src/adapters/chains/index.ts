import type { AnchoringConfig } from '../../config';
import { type AnchorChain, type ChainKind, DEVNET_EVM_NETWORK } from '../../ports/chains';
import { type StacksDevnetEndpoint, startStacksDevnetWorker } from './devnet-worker';
import { EvmEasChain } from './evm-eas';
import { type HardhatDevnet, startHardhatDevnet } from './hardhat-devnet';
import { StacksConfigError, StacksNotaryChain } from './stacks';

/** A chain to anchor on, built from configuration by the registry. */
export interface ChainEntry {
  readonly kind: ChainKind;
  readonly chain: AnchorChain;
  /** Confirmation depth before a transaction counts (the inclusion block counting as 1). */
  readonly confirmations: number;
  /**
   * Work before the first transaction (EVM: register the EAS schema when missing; Stacks: the endpoint's kind and
   * network). Resolves with a line for the log; the runner retries it with backoff while the node is unreachable.
   */
  readonly prepare?: () => Promise<string>;
  /**
   * The configuration checked against the endpoint once at start, before any worker runs (Stacks: the kind
   * `STACKS_API_KIND` names, the network `STACKS_NETWORK` names). Rejects with `ChainConfigError` when the
   * endpoint contradicts the configuration: the service refuses to start, with that message. Resolves with a line
   * for the log, or `undefined` when the endpoint could not be read now (`prepare` retries it then).
   */
  readonly check?: () => Promise<string | undefined>;
  /** Releases the adapter's connections. */
  readonly close?: () => Promise<void> | void;
}

/** The devnets (the Stacks one in a worker thread) and the chains on them (`ANCHORING=devnet`). */
export interface DevnetChains {
  readonly entries: ChainEntry[];
  readonly devnets: { evm: HardhatDevnet; stacks: StacksDevnetEndpoint };
  /** Stops the devnets. */
  stop(): Promise<void>;
}

type ConfiguredAnchoring = Extract<AnchoringConfig, { mode: 'configured' }>;

/**
 * A chain endpoint contradicts the configuration (another kind of API, another network): the service does not
 * start. The message names the variable to set and the endpoint's URL without its secrets.
 */
export class ChainConfigError extends Error {
  override name = 'ChainConfigError';
}

/**
 * The chain registry: one line per supported chain, building its adapter from the configured variables
 * (README, Anchoring). A new chain is an adapter, its configuration fields and one line here.
 */
const REGISTRY: ((config: ConfiguredAnchoring) => ChainEntry | undefined)[] = [
  (config) => (config.evm ? evmEntry(new EvmEasChain(config.evm), config.evm.confirmations) : undefined),
  (config) =>
    config.stacks
      ? stacksEntry(new StacksNotaryChain(config.stacks), config.stacks.confirmations)
      : undefined,
];

/**
 * The Stacks chain: `check` probes the endpoint at start (a contradiction refuses the start, an endpoint that
 * cannot be read now is left to `prepare`), `prepare` probes it until it answers (the worker starts then).
 */
function stacksEntry(stacks: StacksNotaryChain, confirmations: number): ChainEntry {
  let checked: string | undefined;
  return {
    kind: 'stacks',
    chain: stacks,
    confirmations,
    prepare: async () => {
      if (checked) return checked;
      try {
        return await stacks.probe();
      } catch (e) {
        throw e instanceof StacksConfigError ? new ChainConfigError(e.message) : e;
      }
    },
    check: async () => {
      try {
        checked = await stacks.probe();
        return checked;
      } catch (e) {
        if (e instanceof StacksConfigError) throw new ChainConfigError(e.message);
        return undefined;
      }
    },
  };
}

function evmEntry(evm: EvmEasChain, confirmations: number): ChainEntry {
  return {
    kind: 'evm',
    chain: evm,
    confirmations,
    prepare: async () => {
      const schema = await evm.ensureSchema();
      return `schema ${schema.uid} ${schema.registered ? `registered in ${schema.txHash}` : 'found'}`;
    },
    close: () => evm.close(),
  };
}

/** The chains whose variables are set (`ANCHORING=configured`), EVM first. Nothing is contacted yet. */
export function configuredChains(config: ConfiguredAnchoring): ChainEntry[] {
  return REGISTRY.map((build) => build(config)).filter((e): e is ChainEntry => e !== undefined);
}

/**
 * Starts the in-process Hardhat node (EAS deployed) and the Clarity-VM Stacks node (notary contract deployed,
 * in a worker thread: devnet-worker.ts) and builds the chains on them. If either devnet fails to start, the other is stopped again.
 * @throws the devnet's own error.
 */
export async function startDevnetChains(confirmations: {
  evm: number;
  stacks: number;
}): Promise<DevnetChains> {
  const [evmStart, stacksStart] = await Promise.allSettled([
    startHardhatDevnet({ chainId: DEVNET_EVM_NETWORK.chainId }),
    startStacksDevnetWorker(),
  ]);
  if (evmStart.status === 'rejected' || stacksStart.status === 'rejected') {
    if (evmStart.status === 'fulfilled') await evmStart.value.stop();
    if (stacksStart.status === 'fulfilled') await stacksStart.value.stop();
    throw evmStart.status === 'rejected' ? evmStart.reason : (stacksStart as PromiseRejectedResult).reason;
  }
  const evmNet = evmStart.value;
  const stacksNet = stacksStart.value;
  const evm = new EvmEasChain({
    rpcUrl: evmNet.rpcUrl,
    privateKey: evmNet.funderPrivateKey,
    easAddress: evmNet.easAddress,
    schemaRegistryAddress: evmNet.schemaRegistryAddress,
    network: DEVNET_EVM_NETWORK.network,
    chainId: evmNet.chainId,
    explorerTxPrefix: '',
    attestationScanPrefix: '',
  });
  const stacks = new StacksNotaryChain({
    apiUrl: stacksNet.url,
    privateKey: stacksNet.senderKey,
    contractId: stacksNet.contractId,
    network: 'devnet',
    explorerTxPrefix: '',
  });
  return {
    entries: [evmEntry(evm, confirmations.evm), stacksEntry(stacks, confirmations.stacks)],
    devnets: { evm: evmNet, stacks: stacksNet },
    stop: async () => {
      await stacksNet.stop();
      await evmNet.stop();
    },
  };
}
