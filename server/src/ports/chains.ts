import { keccak256, solidityPacked, ZeroAddress } from 'ethers';

/**
 * Chain port of the anchoring pipeline: one implementation per chain (EVM through an EAS attestation, Stacks through a
 * Clarity contract call), the same worker code for the local devnet, tests and production networks.
 *
 * The pipeline drives a transaction through: nonce (under its own lock) → `signAnchor` (the signed bytes and
 * hash are committed before anything is sent) → `broadcast` (idempotent: re-sending the same bytes after a
 * crash is safe) → `getStatus` until included with enough confirmations; a stuck one is re-signed with the same
 * nonce and a higher fee; a receipt that disappears (reorg) sends the batch again.
 */

export type ChainKind = 'evm' | 'stacks';

/**
 * The EAS schema every EVM anchor is attested under (registered once per SchemaRegistry by the EVM adapter):
 * one field, the batch's Merkle root (for a tree of one leaf, that leaf's value itself). Certificates and
 * receipts name it so that anyone can decode an attestation without this service.
 */
export const EAS_SCHEMA = 'bytes32 merkleRoot';

/**
 * UID of `EAS_SCHEMA` with no resolver, not revocable: `keccak256(abi.encodePacked(schema, resolver,
 * revocable))` (EAS SchemaRegistry `_getUID`), identical on every chain.
 */
export const EAS_SCHEMA_UID = keccak256(
  solidityPacked(['string', 'address', 'bool'], [EAS_SCHEMA, ZeroAddress, false]),
);

/** EVM network name and chain id of the in-process devnet (Hardhat's defaults). */
export const DEVNET_EVM_NETWORK = { network: 'hardhat', chainId: 31337 } as const;

/**
 * The devnet's EAS contracts and their deployer (Hardhat's account #0, also the devnet's attester): the devnet
 * deploys SchemaRegistry then EAS from that account at its nonces 0 and 1 on every start
 * (`adapters/chains/hardhat-devnet.ts`), so they are always at these addresses. Receipts name them.
 */
export const DEVNET_EAS_CONTRACTS = {
  deployer: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
  schemaRegistry: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
  eas: '0xe7f1725E7734CE288F8367e1Bb143E90bb3F0512',
} as const;

/** Public description of the configured network (feeds `GET /api/onchain/info`). */
export interface ChainNetworkInfo {
  /** e.g. `hardhat`, `base-sepolia`, `sepolia`; for Stacks `devnet`, `testnet`, `mainnet`. */
  network: string;
  /** EVM chain id (Stacks: its chain id constant). */
  chainId: number;
  /** Explorer prefix of transaction links (EVM: `<prefix>/<0xhash>`; Stacks: `<prefix>/0x<txid>?chain=<network>`). */
  explorerTxPrefix: string;
  /** EVM only: prefix of attestation view links (`<prefix>/<uid>`), empty for Stacks. */
  attestationScanPrefix: string;
  /**
   * The contract the anchors are written to: the EAS contract address (EVM) or the notary contract id
   * `<address>.<name>` (Stacks). Recorded on each transaction row, printed on certificates.
   */
  contract: string;
}

/** Fee parameters, in the chain's smallest unit (wei per gas; micro-STX for Stacks). */
export interface FeeParams {
  /** EVM: maxFeePerGas; Stacks: total fee. */
  maxFee: bigint;
  /** EVM: maxPriorityFeePerGas; unused on Stacks. */
  priorityFee: bigint;
}

export interface SignedAnchorTx {
  /** Transaction hash / txid, lower-case hex with 0x (Stacks txids are stored with 0x too). */
  txHash: string;
  /** The signed, serialized transaction: exactly what `broadcast` sends. */
  raw: Uint8Array;
  nonce: bigint;
  fee: FeeParams;
}

export type BroadcastResult =
  | { ok: true }
  /**
   * Not sent. `reason` is the node's own message, read from its response (redacted of the endpoint's
   * secrets). `rate-limited`: the provider answered 429 (or a JSON-RPC rate-limit error) or its last
   * `Retry-After` has not passed yet, so nothing was sent; `retryAfterMs` is how long to wait. Neither
   * `rate-limited` nor `unreachable` says anything about the transaction: both are retried, never counted
   * as refusals.
   */
  | {
      ok: false;
      reason: string;
      kind: 'nonce-too-low' | 'already-known' | 'underpriced' | 'rejected' | 'unreachable' | 'rate-limited';
      retryAfterMs?: number;
    };

/**
 * Thrown by an adapter's reads (`chainNonce`, `suggestFees`, `getStatus`) when the provider rate-limits it:
 * HTTP 429 (RFC 6585 §4), or a JSON-RPC error that says so (EIP-1474 code -32005 "limit exceeded", code 429),
 * or while the wait its last such answer asked for (`Retry-After`, RFC 9110 §10.2.3) has not passed. The
 * message is already redacted. The pipeline waits `retryAfterMs` before it calls that chain again and
 * counts nothing against the transaction.
 */
export class ChainRateLimitedError extends Error {
  override readonly name = 'ChainRateLimitedError';
  /** How long to wait before the next call to this endpoint, in milliseconds (≥ 0). */
  readonly retryAfterMs: number;

  constructor(message: string, retryAfterMs: number) {
    super(message);
    this.retryAfterMs = Math.max(0, retryAfterMs);
  }
}

export type TxStatus =
  | { state: 'unknown' }
  | { state: 'pending' }
  | {
      state: 'included';
      blockNumber: bigint;
      /** Blocks on top of the inclusion block, the inclusion block counting as 1. */
      confirmations: number;
      /** EVM: the EAS attestation UID from the `Attested` event. */
      attestationUid?: string;
      /** The 32-byte value the transaction anchored, read back from the chain (hex with 0x). */
      anchoredRoot: string;
    }
  | { state: 'failed'; reason: string };

export interface AnchorChain {
  readonly kind: ChainKind;
  info(): ChainNetworkInfo;
  /** The signer's next nonce as the chain sees it (pending included): the resync source. */
  chainNonce(): Promise<bigint>;
  /** Current suggested fees. */
  suggestFees(): Promise<FeeParams>;
  /** Builds and signs the anchoring transaction of `root` (exactly 32 bytes). No broadcast. */
  signAnchor(root: Uint8Array, nonce: bigint, fee: FeeParams): Promise<SignedAnchorTx>;
  /** Sends signed bytes; never throws for a node refusal (see `BroadcastResult`). */
  broadcast(raw: Uint8Array): Promise<BroadcastResult>;
  getStatus(txHash: string): Promise<TxStatus>;
}

/**
 * A chain to anchor on, as the chain registry (`adapters/chains`) builds it from configuration and the
 * composition root hands it to the anchoring runner.
 */
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
   * `STACKS_API_KIND` names, the network `STACKS_NETWORK` names). Rejects with the registry's `ChainConfigError`
   * when the endpoint contradicts the configuration: the service refuses to start, with that message. Resolves
   * with a line for the log, or `undefined` when the endpoint could not be read now (`prepare` retries it then).
   */
  readonly check?: () => Promise<string | undefined>;
  /** Releases the adapter's connections. */
  readonly close?: () => Promise<void> | void;
}
