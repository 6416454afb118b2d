/**
 * The Stacks devnet's state, one object the parts share (node routes, indexer routes, miner, switches, servers):
 * the Clarity VM session, the chain facts it does not keep, the transactions it saw, the switches as now set,
 * the request log and the schema check.
 */
import type { ClarityEvent, Simnet } from '@stacks/clarinet-sdk';
import type { ClarityValue } from '@stacks/transactions';
import type { ChainFacts } from './stacks-chain';
import type { SchemaCheck } from './stacks-schema-check';
import type { Limiter, StacksDevnetSwitches } from './stacks-switches';

/** One request the devnet answered (`requests()`), oldest first. */
export interface StacksDevnetRequest {
  /** `url` (node, or node + Hiro) or `indexer` (`indexerUrl`). */
  address: 'url' | 'indexer';
  method: string;
  /** Path and query as sent. */
  path: string;
  status: number;
  /** ms since the epoch. */
  at: number;
  /** The `x-api-key` header, when sent (Hiro's API key header). */
  apiKey?: string;
}

/** A transaction the devnet admitted: its call, and once mined its block, result and events. */
export interface TxRecord {
  txid: string;
  raw: Uint8Array;
  sender: string;
  nonce: bigint;
  fee: bigint;
  contractId: string;
  functionName: string;
  args: ClarityValue[];
  postConditionMode: 'allow' | 'deny' | 'originator';
  anchorMode: 'on_chain_only' | 'off_chain_only' | 'any';
  receiptTime: number;
  receiptBlockHeight: number;
  status: 'pending' | 'success' | 'abort_by_response' | 'dropped_replace_by_fee';
  replacedBy?: string;
  blockHeight?: number;
  txIndex?: number;
  result?: ClarityValue;
  events?: ClarityEvent[];
  /** The indexer's view after `markNonCanonical`. */
  orphaned?: 'orphaned' | 'restored';
}

/** Everything a running devnet holds; its parts read and change it (no other state is shared between them). */
export interface StacksDevnetState {
  /** The Clarity VM session (epoch 3.1), the notary contract deployed. */
  readonly simnet: Simnet;
  /** Block times, burn heights and hashes the simnet does not keep. */
  readonly chain: ChainFacts;
  /** The funded deployer/sender's private key (hex, compressed) and address. */
  readonly senderKey: string;
  readonly senderAddress: string;
  /** The switches as now set (`configure` changes this object in place). */
  readonly switches: StacksDevnetSwitches;
  /** Hiro's gateway limiter for `switches.rateLimit` (replaced when it changes). */
  limiter: Limiter;
  /** Every transaction admitted, by txid (lower-case hex, no 0x): pending, mined or replaced. */
  readonly txs: Map<string, TxRecord>;
  /** Each account's next nonce as the chain has executed it. */
  readonly confirmedNonce: Map<string, bigint>;
  /** The requests answered (the last `MAX_LOGGED_REQUESTS`), oldest first. */
  readonly log: StacksDevnetRequest[];
  /** The pinned-schema check of every answer (tests), and the violations it found. */
  readonly schemaCheck: SchemaCheck;
}

/** The account nonce of `who` as the node sees it (the next one it will execute). */
export function nonceOf(state: StacksDevnetState, who: string): bigint {
  return state.confirmedNonce.get(who) ?? 0n;
}
