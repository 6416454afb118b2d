import { validateStacksAddress } from '@stacks/transactions';
import { z } from 'zod';
import { invalidConfig, isBaseUrl, type NodeEnv, optionalString, stripSlash, urlList } from './env';

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * A Clarity contract identifier, `<standard principal>.<contract name>` (SIP-002: names start with a letter, at
 * most 40 characters of letters, digits and `-`). The principal's c32check checksum is verified.
 */
function isContractId(value: string): boolean {
  const dot = value.indexOf('.');
  if (dot < 0) return false;
  return (
    validateStacksAddress(value.slice(0, dot)) && /^[a-zA-Z][a-zA-Z0-9-]{0,39}$/.test(value.slice(dot + 1))
  );
}

/** Anchoring, the chains and the endpoints announced to verifiers (docs/anchoring.md). */
export const AnchoringEnv = z.object({
  ANCHORING: z.enum(['devnet', 'off', 'configured']).optional(),
  ANCHOR_BATCH_SECONDS: z.coerce.number().positive().max(86_400).optional(),
  ANCHOR_BATCH_MAX: z.coerce.number().int().min(1).max(100_000).default(1000),
  ANCHOR_STUCK_SECONDS: z.coerce.number().int().min(1).max(86_400).optional(),
  ANCHOR_LEASE_SECONDS: z.coerce.number().int().min(10).max(3600).optional(),
  ANCHOR_FEE_BUMP_PERCENT: z.coerce
    .number()
    .min(10, 'must be at least 10 (nodes refuse a replacement that raises its fees by less)')
    .max(1000)
    .optional(),
  EVM_RPC_URL: optionalString.pipe(z.url().optional()),
  EVM_PRIVATE_KEY: optionalString.refine(
    (v) => v === undefined || /^0x[0-9a-fA-F]{64}$/.test(v),
    'must be 0x followed by 64 hex digits',
  ),
  EVM_NETWORK: optionalString,
  EVM_CHAIN_ID: z.coerce.number().int().positive().optional(),
  EAS_ADDRESS: optionalString.refine((v) => v === undefined || EVM_ADDRESS.test(v), 'must be 0x + 40 hex'),
  EAS_SCHEMA_REGISTRY_ADDRESS: optionalString.refine(
    (v) => v === undefined || EVM_ADDRESS.test(v),
    'must be 0x + 40 hex',
  ),
  EAS_SCHEMA_UID: optionalString.refine(
    (v) => v === undefined || /^0x[0-9a-fA-F]{64}$/.test(v),
    'must be 0x followed by 64 hex digits',
  ),
  EVM_CONFIRMATIONS: z.coerce.number().int().min(1).max(1000).optional(),
  EVM_EXPLORER_TX_PREFIX: optionalString,
  EAS_SCAN_PREFIX: optionalString,
  STACKS_API_URL: optionalString.pipe(z.url().optional()),
  STACKS_PRIVATE_KEY: optionalString.refine(
    (v) => v === undefined || /^(0x)?[0-9a-fA-F]{64}(01)?$/.test(v),
    'must be 64 hex digits, optionally followed by 01 (compressed)',
  ),
  // The address part is checked with its c32check checksum (a mistyped address is refused at start); its length
  // varies with the hash (38 to 40 characters after the `S`).
  STACKS_CONTRACT_ID: optionalString.refine(
    (v) => v === undefined || isContractId(v),
    'must be <address>.<contract name>',
  ),
  STACKS_NETWORK: z.enum(['mainnet', 'testnet', 'devnet']).default('testnet'),
  STACKS_CONFIRMATIONS: z.coerce.number().int().min(1).max(1000).optional(),
  STACKS_EXPLORER_TX_PREFIX: z.string().default('https://explorer.hiro.so/txid'),
  STACKS_API_KIND: z.enum(['auto', 'hiro-v3', 'hiro-v1', 'node']).default('auto'),
  STACKS_API_KEY: optionalString,
  STACKS_API_RPM: z.coerce.number().int().min(1).max(100_000).default(40),
  VERIFY_EVM_RPC_URLS: z
    .string()
    .default('')
    .transform(urlList)
    .refine((list) => list.every(isBaseUrl), 'comma-separated http(s) URLs without query or fragment'),
  VERIFY_STACKS_API_URLS: z
    .string()
    .default('')
    .transform(urlList)
    .refine((list) => list.every(isBaseUrl), 'comma-separated http(s) URLs without query or fragment'),
});
export type AnchoringEnv = z.infer<typeof AnchoringEnv>;

/** Known EVM networks: `EVM_NETWORK` fills in the chain id, EAS addresses and explorer links (docs/anchoring.md). */
export const EVM_NETWORK_PRESETS: Record<
  string,
  {
    chainId: number;
    easAddress: string;
    schemaRegistryAddress: string;
    explorerTxPrefix: string;
    attestationScanPrefix: string;
  }
> = {
  sepolia: {
    chainId: 11155111,
    easAddress: '0xC2679fBD37d54388Ce493F1DB75320D236e1815e',
    schemaRegistryAddress: '0x0a7E2Ff54e76B8E6659aedc9103FB21c038050D0',
    explorerTxPrefix: 'https://sepolia.etherscan.io/tx',
    attestationScanPrefix: 'https://sepolia.easscan.org/attestation/view',
  },
  'base-sepolia': {
    chainId: 84532,
    easAddress: '0x4200000000000000000000000000000000000021',
    schemaRegistryAddress: '0x4200000000000000000000000000000000000020',
    explorerTxPrefix: 'https://sepolia.basescan.org/tx',
    attestationScanPrefix: 'https://base-sepolia.easscan.org/attestation/view',
  },
};

/** An EVM chain reached over JSON-RPC (EAS attestations, `adapters/chains/evm-eas.ts`). */
export interface EvmAnchoringConfig {
  rpcUrl: string;
  privateKey: string;
  /** Display name, e.g. `base-sepolia`. */
  network: string;
  chainId: number;
  easAddress: string;
  schemaRegistryAddress: string;
  /** Checked against the adapter's schema UID when given; the schema is registered at start when missing. */
  schemaUid: string | undefined;
  /** Confirmation depth, the inclusion block counting as 1. */
  confirmations: number;
  /** `<prefix>/<0xhash>`; empty when there is no explorer. */
  explorerTxPrefix: string;
  /** `<prefix>/<uid>` (easscan); empty when there is none. */
  attestationScanPrefix: string;
}

/** A Stacks node / Hiro API and the deployed notary contract (`adapters/chains/stacks.ts`). */
export interface StacksAnchoringConfig {
  apiUrl: string;
  privateKey: string;
  /** `<address>.<name>` of `server/contracts/notary.clar` as deployed. */
  contractId: string;
  network: 'mainnet' | 'testnet' | 'devnet';
  confirmations: number;
  /** `<prefix>/0x<txid>?chain=<network>`. */
  explorerTxPrefix: string;
  /**
   * What `apiUrl` is (`STACKS_API_KIND`): a Hiro API with v3 routes, an older one with v1 routes only, a bare
   * stacks-node, or `auto` (detected); checked against the endpoint at start.
   */
  apiKind: 'auto' | 'hiro-v3' | 'hiro-v1' | 'node';
  /** `STACKS_API_KEY`, sent as `x-api-key`: a secret, never logged (redacted from every error). */
  apiKey: string | undefined;
  /** `STACKS_API_RPM`: requests per minute to `apiUrl`, shared by every anchor in flight (default 40). */
  apiRpm: number;
}

/**
 * Anchoring of document hashes on public chains, so a timestamp can be checked without the service
 * (docs/anchoring.md). `off`: nothing runs, documents stay `pending`. `devnet`: the in-process Hardhat (EAS)
 * and Clarity-VM Stacks devnets are anchored on, each started at its first use (a fresh chain every start).
 * `configured`: the chains whose variables are set (`evm`, `stacks`; at least one).
 */
export type AnchoringConfig =
  | { mode: 'off' }
  | ({
      mode: 'devnet';
      /** Seconds between two batch collections. */
      batchSeconds: number;
      /** Most documents in one batch (one Merkle tree, one transaction per chain). */
      batchMax: number;
      evmConfirmations: number;
      stacksConfirmations: number;
    } & AnchorWorkerConfig)
  | ({
      mode: 'configured';
      batchSeconds: number;
      batchMax: number;
      evm: EvmAnchoringConfig | undefined;
      stacks: StacksAnchoringConfig | undefined;
    } & AnchorWorkerConfig);

/**
 * The anchor workers' settings an operator may change (`domain/anchoring/anchor-worker.ts`): when a sent
 * transaction is replaced with higher fees, and how long an instance holds an anchor transaction it took up.
 * Unset: the runner's defaults (stuck after 30 s on the devnet, 10 minutes on networks; +12.5 %; a lease of
 * 30 s on the devnet, 2 minutes on networks).
 */
export interface AnchorWorkerConfig {
  /** `ANCHOR_STUCK_SECONDS`: still pending (or dropped) this long after it was first sent: replaced. */
  stuckAfterSeconds?: number;
  /**
   * `ANCHOR_LEASE_SECONDS`: an instance that took up an anchor transaction holds it this long; after a crash
   * (or a kill) another instance, or the restarted one, takes it over once the lease has run out.
   */
  leaseSeconds?: number;
  /** `ANCHOR_FEE_BUMP_PERCENT`: the least a replacement raises both fees, in percent (10 or more). */
  feeBumpPercent?: number;
}

/**
 * Chain endpoints a verifier may ask to check a receipt without the service, as `GET /api/onchain/info`
 * announces them.
 */
export interface VerifyEndpoints {
  /** EVM JSON-RPC URLs (no trailing slash). */
  evmRpcUrls: string[];
  /** Stacks API base URLs (stacks-core `/v2` and Hiro `/extended`), no trailing slash. */
  stacksApiUrls: string[];
}

/** Resolves `ANCHORING` and the chain variables; throws `Error` naming what is missing or contradictory. */
export function anchoringConfig(e: AnchoringEnv, env: NodeEnv): AnchoringConfig {
  const fail = (message: string): never => {
    throw invalidConfig(message);
  };
  const chainsSet = e.EVM_RPC_URL !== undefined || e.STACKS_API_URL !== undefined;
  // Production never guesses: with no chain configured it would anchor on a throwaway devnet and report
  // documents as registered on a chain that vanishes at the next start.
  if (env === 'production' && e.ANCHORING === undefined && !chainsSet) {
    fail(
      'ANCHORING: NODE_ENV=production needs a chain (EVM_RPC_URL and/or STACKS_API_URL) or an explicit ANCHORING=off',
    );
  }
  const mode = e.ANCHORING ?? (chainsSet ? 'configured' : 'devnet');
  if (mode === 'off') return { mode };
  const batchMax = e.ANCHOR_BATCH_MAX;
  const workerTuning: AnchorWorkerConfig = {
    ...(e.ANCHOR_STUCK_SECONDS === undefined ? {} : { stuckAfterSeconds: e.ANCHOR_STUCK_SECONDS }),
    ...(e.ANCHOR_LEASE_SECONDS === undefined ? {} : { leaseSeconds: e.ANCHOR_LEASE_SECONDS }),
    ...(e.ANCHOR_FEE_BUMP_PERCENT === undefined ? {} : { feeBumpPercent: e.ANCHOR_FEE_BUMP_PERCENT }),
  };
  if (mode === 'devnet') {
    if (chainsSet)
      fail('ANCHORING=devnet: unset EVM_RPC_URL and STACKS_API_URL (or use ANCHORING=configured)');
    return {
      mode,
      batchSeconds: e.ANCHOR_BATCH_SECONDS ?? 2,
      batchMax,
      evmConfirmations: e.EVM_CONFIRMATIONS ?? 1,
      stacksConfirmations: e.STACKS_CONFIRMATIONS ?? 1,
      ...workerTuning,
    };
  }
  if (!chainsSet) fail('ANCHORING=configured: set EVM_RPC_URL and/or STACKS_API_URL');
  let evm: EvmAnchoringConfig | undefined;
  if (e.EVM_RPC_URL !== undefined) {
    const preset = e.EVM_NETWORK === undefined ? undefined : EVM_NETWORK_PRESETS[e.EVM_NETWORK];
    const chainId = e.EVM_CHAIN_ID ?? preset?.chainId;
    const easAddress = e.EAS_ADDRESS ?? preset?.easAddress;
    const schemaRegistryAddress = e.EAS_SCHEMA_REGISTRY_ADDRESS ?? preset?.schemaRegistryAddress;
    const missing = [
      e.EVM_PRIVATE_KEY === undefined ? 'EVM_PRIVATE_KEY' : undefined,
      chainId === undefined ? 'EVM_CHAIN_ID' : undefined,
      easAddress === undefined ? 'EAS_ADDRESS' : undefined,
      schemaRegistryAddress === undefined ? 'EAS_SCHEMA_REGISTRY_ADDRESS' : undefined,
    ].filter((m): m is string => m !== undefined);
    if (missing.length > 0) {
      fail(
        `EVM_RPC_URL is set: also set ${missing.join(', ')} (or an EVM_NETWORK with presets: sepolia, base-sepolia)`,
      );
    }
    evm = {
      rpcUrl: e.EVM_RPC_URL,
      privateKey: e.EVM_PRIVATE_KEY as string,
      network: e.EVM_NETWORK ?? `evm-${chainId}`,
      chainId: chainId as number,
      easAddress: easAddress as string,
      schemaRegistryAddress: schemaRegistryAddress as string,
      schemaUid: e.EAS_SCHEMA_UID,
      confirmations: e.EVM_CONFIRMATIONS ?? 3,
      explorerTxPrefix: stripSlash(e.EVM_EXPLORER_TX_PREFIX ?? preset?.explorerTxPrefix ?? ''),
      attestationScanPrefix: stripSlash(e.EAS_SCAN_PREFIX ?? preset?.attestationScanPrefix ?? ''),
    };
  }
  let stacks: StacksAnchoringConfig | undefined;
  if (e.STACKS_API_URL !== undefined) {
    if (e.STACKS_PRIVATE_KEY === undefined || e.STACKS_CONTRACT_ID === undefined) {
      fail('STACKS_API_URL is set: also set STACKS_PRIVATE_KEY and STACKS_CONTRACT_ID');
    }
    stacks = {
      apiUrl: e.STACKS_API_URL,
      privateKey: (e.STACKS_PRIVATE_KEY as string).replace(/^0x/, ''),
      contractId: e.STACKS_CONTRACT_ID as string,
      network: e.STACKS_NETWORK,
      confirmations: e.STACKS_CONFIRMATIONS ?? 3,
      explorerTxPrefix: stripSlash(e.STACKS_EXPLORER_TX_PREFIX),
      apiKind: e.STACKS_API_KIND,
      apiKey: e.STACKS_API_KEY,
      apiRpm: e.STACKS_API_RPM,
    };
  }
  return { mode, batchSeconds: e.ANCHOR_BATCH_SECONDS ?? 60, batchMax, evm, stacks, ...workerTuning };
}

/** The endpoints announced to verifiers (`VERIFY_EVM_RPC_URLS`, `VERIFY_STACKS_API_URLS`). */
export function verifyEndpoints(e: AnchoringEnv): VerifyEndpoints {
  return { evmRpcUrls: e.VERIFY_EVM_RPC_URLS, stacksApiUrls: e.VERIFY_STACKS_API_URLS };
}

/**
 * How long a client of the Stacks devnet (`ANCHORING=devnet`) waits for an answer, in milliseconds: the devnet
 * starts its Clarity VM on its first request, seconds on a quiet machine and more on a loaded one, which is not a
 * node down. The chain adapter on the devnet and `devnet:info`'s probe wait this long.
 */
export const STACKS_DEVNET_FIRST_ANSWER_MS = 120_000;

/**
 * How long a client of the EVM devnet (`ANCHORING=devnet`) waits for an answer, in milliseconds: the devnet
 * starts on its first request (Hardhat's modules, the EAS deployments and the schema's registration), about
 * 2 s on a quiet machine and more on a loaded one, which is not a node down. The chain adapter on the devnet
 * and `devnet:info`'s probe wait this long.
 */
export const EVM_DEVNET_FIRST_ANSWER_MS = 60_000;
