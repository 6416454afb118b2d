/**
 * Local Stacks node for the embedded default and tests: loopback HTTP servers (127.0.0.1, port 0) backed by the
 * real Clarity VM of `@stacks/clarinet-sdk` 3.21 (an empty simnet session in epoch 3.1, no Clarinet.toml), with
 * `server/contracts/notary.clar` deployed (Clarity 3) by a freshly funded account.
 *
 * It answers the subset of the stacks-node RPC API (stacks-core `docs/rpc/openapi.yaml`) and of the Hiro Stacks
 * Blockchain API (`openapi.yaml`, and its deprecated v1 routes) that the notary's readers use, in their published
 * shapes (every answer is held to the pinned schemas in tests, see `schemas` below):
 * - node (stacks-node-routes.ts): `GET /v2/info`, `GET /v2/accounts/:principal`, `GET /v2/fees/transfer`,
 *   `POST /v2/transactions`, `POST /v2/contracts/call-read/:address/:contract/:function`,
 *   `GET /v2/transactions/unconfirmed/:txid`;
 * - indexer (Hiro, stacks-indexer-routes.ts): `GET /extended` (status), `GET /extended/v3/transactions/:tx_id`,
 *   `GET /extended/v3/principals/:principal/nonces`, and the deprecated v1 transaction and nonces routes.
 *
 * Two addresses (stacks-server.ts): `url` is the node, with Hiro's routes too when `kind` is `hiro` (as
 * api.hiro.so serves both); `indexerUrl` is always a Hiro API (its `/extended` routes and the `/v2` ones it
 * proxies to the node).
 *
 * Mining (stacks-miner.ts): transactions wait in a mempool; a block is mined every `blockTimeMs` (empty blocks
 * too, so confirmations grow) or on `mine(n)`.
 *
 * Switches (stacks-switches.ts; `StacksDevnetSwitches`, at start and through `configure` at run time) make it
 * answer like the situations a client meets on real networks: a bare node, an indexer that lags, 429s, 410s, a
 * transaction orphaned by a fork, a replaced transaction.
 *
 * The parts share one state object (stacks-state.ts), built here.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { repositoryFile } from '@notary/shared/module-entry';
import { getSDK, type Simnet } from '@stacks/clarinet-sdk';
import { ClarityType, cvToString, privateKeyToAddress, randomPrivateKey } from '@stacks/transactions';
import { ChainFacts } from './stacks-chain';
import { mine, replaceByFee } from './stacks-miner';
import { openSchemaCheck } from './stacks-schema-check';
import { listenStacksServers } from './stacks-server';
import type { StacksDevnetRequest, StacksDevnetState } from './stacks-state';
import {
  configureSwitches,
  initialSwitches,
  markNonCanonical,
  newLimiter,
  type StacksDevnetSwitches,
} from './stacks-switches';

export { DEVNET_CHAIN_ID } from './stacks-chain';
export { HIRO_DEPRECATED_MESSAGE } from './stacks-indexer-routes';
export { MAX_PENDING_PER_SENDER } from './stacks-miner';
export type { StacksDevnetRequest } from './stacks-state';
export type { StacksDevnetRateLimit, StacksDevnetSwitches } from './stacks-switches';

/** Source of the notary contract deployed on the devnet (and on real networks by hand). */
export const NOTARY_CONTRACT_PATH = fileURLToPath(repositoryFile('server/contracts/notary.clar'));

export interface StacksDevnetOptions {
  /** Block interval of the automatic miner; 0 mines only on `mine()` (tests). Default 1000 ms. */
  blockTimeMs?: number;
  /** Private key of the funded deployer/sender (hex, compressed); a random one by default. */
  senderKey?: string;
  /** µSTX minted to the sender. Default 1,000,000 STX. */
  initialBalance?: bigint;
  /** Contract name. Default `notary`. */
  contractName?: string;
  /** Switches at start (see `StacksDevnetSwitches`). */
  switches?: Partial<StacksDevnetSwitches>;
  /**
   * Tests only: path of a module exporting `validateStacksAnswer` (test/harness/stacks-schemas.ts). Default: the
   * `STACKS_DEVNET_SCHEMAS` environment variable, which the test setup sets (test/harness/stacks-devnet-guard.ts);
   * without either nothing is loaded. Every answer is then checked; violations are recorded (`takeViolations`,
   * `onViolation`).
   */
  schemas?: string;
  /** Called with each violation (default: the test guard's process-wide record, when the validator is loaded). */
  onViolation?: (violation: string) => void;
}

/** What tests and the service's devnet mode steer the devnet with (the worker thread carries these too). */
export interface StacksDevnetControls {
  /** Mines `n` blocks (default 1); the first includes the mempool. Resolves to the new tip height. */
  mine(n?: number): number;
  /** Credits `amount` µSTX to `address` (fixtures). */
  fund(address: string, amount: bigint): void;
  /** Changes switches; returns all of them as they now are. */
  configure(switches: Partial<StacksDevnetSwitches>): StacksDevnetSwitches;
  /**
   * The indexer's view of a mined transaction after a fork orphaned its block (the node keeps it: the Clarity VM
   * has no forks). `restored: false` (default), as when Hiro never saw it in its mempool: v1 answers it with
   * `canonical: false`, v3 (which reads canonical transactions and the live mempool only) 404, and it leaves the
   * nonces. `restored: true`, as Hiro does on a reorg (`pg-write-store.ts` restores orphaned transactions to the
   * mempool): both answer it pending, from the mempool.
   * @throws Error when the transaction is unknown or not mined yet.
   */
  markNonCanonical(txid: string, options?: { restored?: boolean }): void;
  /**
   * Replaces a pending transaction of the devnet's own sender by the same call with a higher fee (default:
   * twice the fee), signed with its key and admitted as a broadcast one would be: the first then reads
   * `dropped_replace_by_fee` with `replaced_by_tx_id` on Hiro v1, 404 on v3 and on the node's unconfirmed route.
   * @returns the replacement's txid (64 hex, no 0x).
   * @throws Error when the transaction is not pending or not the devnet sender's.
   */
  replaceByFee(txid: string, fee?: bigint): string;
  /** The schema violations recorded since the last call, cleared (empty without a validator). */
  takeViolations(): string[];
  /** The requests answered so far (the last 10,000), oldest first. */
  requests(): StacksDevnetRequest[];
}

export interface StacksDevnet extends StacksDevnetControls {
  /** Base URL of the node (with Hiro's routes when `kind` is `hiro`), e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Base URL of the Hiro API (`/extended`, and `/v2` proxied to the node), which `indexerLagBlocks` delays. */
  indexerUrl: string;
  network: 'devnet';
  /** `<deployer address>.<name>`. */
  contractId: string;
  /** Private key of a funded account (the deployer). */
  senderKey: string;
  senderAddress: string;
  stop(): Promise<void>;
}

/** Starts the devnet; `stop()` closes it (the timer and servers are unref'd: they never keep the process alive). */
export async function startStacksDevnet(options: StacksDevnetOptions = {}): Promise<StacksDevnet> {
  const schemaCheck = await openSchemaCheck(options);
  const { simnet, senderKey, senderAddress, contractId } = await openSimnet(options);
  const switches = initialSwitches(options.switches);
  const state: StacksDevnetState = {
    simnet,
    chain: new ChainFacts(simnet),
    senderKey,
    senderAddress,
    switches,
    limiter: newLimiter(switches.rateLimit),
    txs: new Map(),
    confirmedNonce: new Map(),
    log: [],
    schemaCheck,
  };
  const servers = await listenStacksServers(state);
  const blockTimeMs = options.blockTimeMs ?? 1000;
  const timer = blockTimeMs > 0 ? setInterval(() => mine(state, 1), blockTimeMs) : undefined;
  timer?.unref();

  return {
    url: `http://127.0.0.1:${servers.nodePort}`,
    indexerUrl: `http://127.0.0.1:${servers.indexerPort}`,
    network: 'devnet',
    contractId,
    senderKey,
    senderAddress,
    ...devnetControls(state),
    stop: async () => {
      if (timer) clearInterval(timer);
      await servers.close();
    },
  };
}

/**
 * An empty simnet session in epoch 3.1 with the sender funded and the notary contract deployed (Clarity 3).
 * @throws Error when the deployment fails.
 */
async function openSimnet(
  options: StacksDevnetOptions,
): Promise<{ simnet: Simnet; senderKey: string; senderAddress: string; contractId: string }> {
  const simnet = await getSDK();
  await simnet.initEmptySession({ enabled: false, api_url: '', initial_height: null });
  simnet.setEpoch('3.1');

  const senderKey = options.senderKey ?? randomPrivateKey();
  const senderAddress = privateKeyToAddress(senderKey, 'devnet');
  const contractName = options.contractName ?? 'notary';
  simnet.mintSTX(senderAddress, options.initialBalance ?? 1_000_000_000_000n);
  simnet.deployer = senderAddress;
  const deployed = simnet.deployContract(
    contractName,
    readFileSync(NOTARY_CONTRACT_PATH, 'utf8'),
    { clarityVersion: 3 },
    senderAddress,
  );
  if (deployed.result.type !== ClarityType.BoolTrue) {
    throw new Error(`notary contract deployment failed: ${cvToString(deployed.result)}`);
  }
  return { simnet, senderKey, senderAddress, contractId: `${senderAddress}.${contractName}` };
}

/** The controls of a running devnet over its state (see `StacksDevnetControls`). */
function devnetControls(state: StacksDevnetState): StacksDevnetControls {
  return {
    mine: (n) => mine(state, n),
    fund: (address, amount) => {
      state.simnet.mintSTX(address, amount);
    },
    configure: (next) => configureSwitches(state, next),
    markNonCanonical: (txid, opts) => markNonCanonical(state, txid, opts),
    replaceByFee: (txid, fee) => replaceByFee(state, txid, fee),
    takeViolations: () => state.schemaCheck.take(),
    requests: () => state.log.map((r) => ({ ...r })),
  };
}
