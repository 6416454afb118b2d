import type { AnchoringConfig } from '../../config';
import { EVM_DEVNET_FIRST_ANSWER_MS, STACKS_DEVNET_FIRST_ANSWER_MS } from '../../config/anchoring';
import { type ChainEntry, DEVNET_EVM_NETWORK } from '../../ports/chains';
import type { LazyStacksDevnetEndpoint } from './devnet-worker';
import { EvmEasChain } from './evm-eas';
import type { LazyHardhatDevnet } from './hardhat-devnet';
import { StacksConfigError, StacksNotaryChain } from './stacks';

export type { ChainEntry } from '../../ports/chains';

/**
 * The devnets (both started on their first use, the Stacks one in a worker thread) and the chains on them
 * (`ANCHORING=devnet`).
 */
export interface DevnetChains {
  readonly entries: ChainEntry[];
  readonly devnets: { evm: LazyHardhatDevnet; stacks: LazyStacksDevnetEndpoint };
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
 * (docs/anchoring.md). A new chain is an adapter, its configuration fields and one line here.
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
 * Builds the chains on the service's two devnets, each started on its first use: the in-process Hardhat node
 * (EAS deployed and the notary schema registered at its start: hardhat-devnet.ts, `startLazyHardhatDevnet`) and
 * the Clarity-VM Stacks node (notary contract deployed, in a worker thread: devnet-worker.ts,
 * `startLazyStacksDevnet`). Nothing here contacts either devnet: only their loopback addresses listen. If
 * either address cannot listen, the other devnet is stopped again. `onError` hears a devnet whose start, on
 * first use, failed.
 * @throws the listen error.
 */
export async function startDevnetChains(
  confirmations: { evm: number; stacks: number },
  onError: (message: string, e: unknown) => void = () => {},
): Promise<DevnetChains> {
  // Loaded here: a service anchoring on configured chains never holds the devnets' code.
  const [{ startLazyHardhatDevnet }, { startLazyStacksDevnet }] = await Promise.all([
    import('./hardhat-devnet'),
    import('./devnet-worker'),
  ]);
  const [evmStart, stacksStart] = await Promise.allSettled([
    startLazyHardhatDevnet({ chainId: DEVNET_EVM_NETWORK.chainId }, (e) =>
      onError('the EVM devnet failed to start', e),
    ),
    startLazyStacksDevnet({}, (e) => onError('the Stacks devnet failed to start', e)),
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
    // The first request waits for the devnet's start (seconds, more on a loaded machine): not a node down.
    rpcTimeoutMs: EVM_DEVNET_FIRST_ANSWER_MS,
  });
  const stacks = new StacksNotaryChain({
    apiUrl: stacksNet.url,
    privateKey: stacksNet.senderKey,
    contractId: stacksNet.contractId,
    network: 'devnet',
    explorerTxPrefix: '',
    // The first request waits for the devnet's start (seconds, more on a loaded machine): not a node down.
    timeoutMs: STACKS_DEVNET_FIRST_ANSWER_MS,
  });
  // Neither is prepared nor probed at start: the devnets are the service's own, and a call would start them
  // (their first use is the first anchoring, a control, or a verifier's request). The EVM devnet registers
  // the schema as it starts.
  const evmChain: ChainEntry = { ...evmEntry(evm, confirmations.evm), prepare: undefined };
  const stacksChain: ChainEntry = { ...stacksEntry(stacks, confirmations.stacks), prepare: undefined };
  return {
    entries: [evmChain, stacksChain],
    devnets: { evm: evmNet, stacks: stacksNet },
    stop: async () => {
      await stacksNet.stop();
      await evmNet.stop();
    },
  };
}

/** The chains anchoring runs on, as `startChains` made them; `stop` releases them (devnets last). */
export interface AnchoringChains {
  /** EVM first. */
  readonly entries: ChainEntry[];
  /** The devnets (`ANCHORING=devnet`): their endpoints, for verifiers and tests; undefined otherwise. */
  readonly devnets: DevnetChains['devnets'] | undefined;
  /** Closes the chains' connections, then stops the devnets if any. Never rejects (failures go to `onError`). */
  stop(): Promise<void>;
}

/**
 * The chains of `config` through the registry: with `devnet`, the in-process devnets' addresses listen (each
 * devnet starts on its first use) and the chains are built on them (`startDevnetChains`); with `configured`, the
 * chains whose variables are set (`configuredChains`). Nothing is contacted yet. `onError` hears a chain that
 * fails to close and a devnet that fails to start at its first use (default: ignored).
 * @throws the listen error when a devnet's address cannot listen (the other one is stopped again).
 */
export async function startChains(
  config: Exclude<AnchoringConfig, { mode: 'off' }>,
  onError: (message: string, e: unknown) => void = () => {},
): Promise<AnchoringChains> {
  const started =
    config.mode === 'devnet'
      ? await startDevnetChains({ evm: config.evmConfirmations, stacks: config.stacksConfirmations }, onError)
      : undefined;
  const entries = config.mode === 'devnet' ? (started?.entries ?? []) : configuredChains(config);
  return {
    entries,
    devnets: started?.devnets,
    stop: async () => {
      for (const entry of [...entries].reverse()) {
        try {
          await entry.close?.();
        } catch (e) {
          onError(`closing the ${entry.kind} chain failed`, e);
        }
      }
      await started?.stop();
    },
  };
}
