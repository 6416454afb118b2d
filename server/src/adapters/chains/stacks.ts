/**
 * Stacks implementation of the chain port: anchors a 32-byte root with a contract call
 * `(anchor (root (buff 32)))` to the notary contract (`server/contracts/notary.clar`), built and signed offline
 * with `@stacks/transactions` 7.6 (explicit nonce and fee, post-condition mode deny, SIP-005 serialization).
 *
 * Every request goes through the Stacks API client the verifier reads with (`@notary/trust/stacks-anchoring`,
 * its reader plus nonces, fees and broadcasts: one client, so one request budget, `STACKS_API_RPM`, shared by
 * every anchor in flight; `x-api-key` from `STACKS_API_KEY`; 429 and `Retry-After` honoured), against an
 * endpoint of one of three kinds (`STACKS_API_KIND`, detected by `auto`):
 * - a Hiro API with v3 routes (`GET /extended/v3/transactions/0x<txid>?include=function_args,result`,
 *   `/extended/v3/principals/<address>/nonces`), or an older one with v1 routes only (`/extended/v1/tx`,
 *   `/extended/v1/address/<address>/nonces`, deprecated, 410 once disabled);
 * - a bare stacks-node: `/v2/*` only (a Hiro API proxies them too): `GET /v2/info`, `GET /v2/accounts/<address>
 *   ?proof=0`, `POST /v2/contracts/call-read/…/get-anchor`, `GET /v2/fees/transfer`, `POST /v2/transactions`.
 *
 * A transaction's status (`getStatus`):
 * - with an indexer: `pending`; `success` on the canonical chain → included once `(get-anchor root)` has the
 *   root on record (its block from the indexer, the tip from `/v2/info`); mined but not canonical → unknown
 *   (the pipeline sends the bytes again: a forked-out transaction is not included); `abort_by_*`,
 *   `problematic_skipped`, `dropped_too_expensive`, `dropped_problematic` → failed (its nonce is used or it will
 *   never be mined: the batch is signed afresh); `dropped_stale_garbage_collect` → unknown (send the same bytes
 *   again); `dropped_replace_by_fee` / `dropped_replace_across_fork` → pending when the replacement is ours for
 *   the same root (the row's replacement, which the pipeline follows, anchors the batch), else failed;
 * - without one (a bare node, or an indexer that does not know the transaction, perhaps lagging behind its
 *   node): the transaction's root and nonce (remembered when it is signed or broadcast) against the node: the
 *   account's nonce has passed the transaction's and `(get-anchor root)` has a record → included at the
 *   record's block (behind an indexer only while the index has not reached that block: past it, the record is
 *   another transaction's, and this one is unknown); nonce passed and no record → failed (dropped, replaced or
 *   aborted); nonce not passed → pending on a node (it has no mempool index; the pipeline replaces a
 *   transaction stuck too long), unknown behind an indexer (send again). A node cannot tell which of two
 *   same-nonce transactions of one root was mined: the one asked about first counts (the row's latest); an
 *   indexer, once it knows, corrects that (the pipeline re-checks every hash of the row).
 *
 * Errors: network failures of `broadcast` become `{ ok: false, kind: 'unreachable' }` (`rate-limited` for a
 * 429 beyond the wait); the read methods throw the reader's `StacksApiUnavailable`, `ChainRateLimitedError`
 * for a rate limit (the pipeline waits then), or a plain error. Whatever leaves the adapter (thrown errors,
 * refusal reasons) is redacted of the API URL's secrets (`ChainEndpoint`: a key in the path, the query or
 * `user:pass@`, sent as Basic authentication) and of the API key.
 */

import { joinSecrets, redactError, redactText, type SecretSet } from '@notary/platform/redact';
import { errorMessage, stripHex } from '@notary/shared';
import { StacksAnchoringClient } from '@notary/trust/stacks-anchoring';
import {
  anchoredRootOfResult,
  describeStacksApiKind,
  readAnchor,
  type StacksApiClock,
  type StacksApiKind,
  type StacksApiKindSetting,
  StacksApiUnavailable,
  type StacksTx,
  StacksWrongKind,
} from '@notary/trust/stacks-api';
import {
  Cl,
  ClarityType,
  deserializeTransaction,
  makeContractCall,
  PayloadType,
  PostConditionMode,
  privateKeyToAddress,
} from '@stacks/transactions';
import {
  type AnchorChain,
  type BroadcastResult,
  type ChainNetworkInfo,
  ChainRateLimitedError,
  type FeeParams,
  type SignedAnchorTx,
  type TxStatus,
} from '../../ports/chains';
import { ChainEndpoint } from './endpoint';

export type StacksNetworkName = 'mainnet' | 'testnet' | 'devnet';

export interface StacksNotaryConfig {
  /** Base URL of a Stacks node / Hiro API, e.g. `https://api.testnet.hiro.so` (no trailing slash needed). */
  apiUrl: string;
  /** Signer private key (hex, 66 chars with the `01` compression suffix, or 64). */
  privateKey: string;
  /** `<address>.<name>` of the deployed notary contract. */
  contractId: string;
  network: StacksNetworkName;
  /** Explorer prefix, e.g. `https://explorer.hiro.so/txid`: links are `<prefix>/0x<txid>?chain=<network>`. */
  explorerTxPrefix: string;
  /** The endpoint's kind (`STACKS_API_KIND`); default `auto` (detected at the first read, or by `probe`). */
  apiKind?: StacksApiKindSetting;
  /** Sent as `x-api-key` (`STACKS_API_KEY`); never logged, redacted from every error. */
  apiKey?: string;
  /** Request budget, requests per minute (`STACKS_API_RPM`); unset: none (the devnets). */
  apiRpm?: number;
  /** Longest a read waits for the budget or a 429's `Retry-After` before it is rate-limited, ms. Default 10 s. */
  maxWaitMs?: number;
  /** Fallback fee in µSTX when the node gives no estimate. Default 1000. */
  defaultFee?: bigint;
  /** Request timeout in ms. Default 10 s. */
  timeoutMs?: number;
  /** Tests: the budget's clock and the fetch used. */
  clock?: StacksApiClock;
  fetch?: typeof fetch;
}

/** The endpoint contradicts the configuration (kind, network): the service refuses to start on it. */
export class StacksConfigError extends Error {
  override name = 'StacksConfigError';
}

/** Chain ids (SIP-005 `chain_id`), also `/v2/info` `network_id`: mainnet 0x00000001, testnet and devnet 0x80000000. */
const CHAIN_IDS: Record<StacksNetworkName, number> = {
  mainnet: 0x00000001,
  testnet: 0x80000000,
  devnet: 0x80000000,
};
/** Approximate serialized size of the anchor contract call (single-sig), for the per-byte fee estimate. */
const ANCHOR_TX_BYTES = 260n;
/** Transactions whose root and nonce are remembered for node-only status reads (the oldest forgotten first). */
const MAX_REMEMBERED_TXS = 10_000;

/** What a node-only status read needs of a transaction this adapter signed or sent. */
interface AnchorTxFacts {
  /** `0x` + 64 hex. */
  root: string;
  nonce: bigint;
}

/** Stacks adapter of `AnchorChain` (see the module comment). */
export class StacksNotaryChain implements AnchorChain {
  readonly kind = 'stacks' as const;
  readonly api: StacksAnchoringClient;
  private readonly endpoint: ChainEndpoint;
  private readonly secrets: SecretSet;
  private readonly contractAddress: string;
  private readonly contractName: string;
  private readonly remembered = new Map<string, AnchorTxFacts>();
  readonly senderAddress: string;

  constructor(private readonly config: StacksNotaryConfig) {
    this.endpoint = new ChainEndpoint(config.apiUrl);
    const [address, name, ...rest] = config.contractId.split('.');
    if (!address || !name || rest.length > 0) throw new Error(`bad Stacks contract id: ${config.contractId}`);
    this.contractAddress = address;
    this.contractName = name;
    this.senderAddress = privateKeyToAddress(config.privateKey, config.network);
    this.secrets = joinSecrets(this.endpoint.secrets, config.apiKey);
    this.api = new StacksAnchoringClient({
      url: this.endpoint.fetchUrl,
      kind: config.apiKind ?? 'auto',
      ...(config.apiKey ? { apiKey: config.apiKey } : {}),
      headers: this.endpoint.headers,
      transport: {
        fetch: config.fetch ?? globalThis.fetch.bind(globalThis),
        timeoutMs: config.timeoutMs ?? 10_000,
      },
      ...(config.apiRpm ? { rpm: config.apiRpm } : {}),
      maxWaitMs: config.maxWaitMs ?? 10_000,
      ...(config.clock ? { clock: config.clock } : {}),
    });
  }

  info(): ChainNetworkInfo {
    return {
      network: this.config.network,
      chainId: CHAIN_IDS[this.config.network],
      explorerTxPrefix: this.config.explorerTxPrefix,
      attestationScanPrefix: '',
      contract: this.config.contractId,
    };
  }

  /** Explorer link of a transaction: `<prefix>/0x<txid>?chain=<network>`. */
  explorerUrl(txHash: string): string {
    return `${this.config.explorerTxPrefix}/0x${stripHex(txHash)}?chain=${this.config.network}`;
  }

  /**
   * Checks the endpoint before anchoring: its kind (the configured one, or detected) and its network.
   * Resolves with a line for the log (URL redacted).
   * @throws StacksConfigError when the endpoint contradicts the configuration (another kind, v1 routes gone for
   *   `hiro-v1`, another network), naming the URL without its secrets and what to set; the reader's
   *   `StacksApiUnavailable` (or `ChainRateLimitedError`) when it cannot be read now.
   */
  probe(): Promise<string> {
    return this.guard(async () => {
      const setting = this.config.apiKind ?? 'auto';
      let kind: StacksApiKind;
      try {
        kind = await this.api.probe();
      } catch (e) {
        throw this.configError(e, setting) ?? e;
      }
      const info = await this.api.info();
      const expected = CHAIN_IDS[this.config.network];
      if (info.networkId !== expected) {
        throw new StacksConfigError(
          `STACKS_NETWORK=${this.config.network} expects network_id ${hexId(expected)}, but ${this.shownUrl()} ` +
            `answers ${hexId(info.networkId)} (${networkOf(info.networkId)}): set STACKS_NETWORK to the node's ` +
            `network or STACKS_API_URL to a ${this.config.network} endpoint`,
        );
      }
      const how = setting === 'auto' ? 'detected' : 'checked';
      return `Stacks API ${this.shownUrl()}: ${describeStacksApiKind(kind)} (${how}), network_id ${hexId(info.networkId)}, tip ${info.stacksTipHeight}`;
    });
  }

  /** The endpoint's kind as the reads use it (detected once in `auto`). */
  apiKind(): Promise<StacksApiKind> {
    return this.guard(() => this.api.kind());
  }

  /**
   * The next nonce: with an indexer the larger of its next nonce (mempool included) and the node's confirmed
   * nonce (an indexer lagging behind its node must not hand out a used nonce); on a node its confirmed nonce.
   */
  chainNonce(): Promise<bigint> {
    return this.guard(async () => {
      const kind = await this.api.kind();
      const confirmed = await this.api.accountNonce(this.senderAddress);
      if (kind === 'node') return confirmed;
      const indexed = await this.api.nextNonce(this.senderAddress);
      return indexed > confirmed ? indexed : confirmed;
    });
  }

  /** `/v2/fees/transfer` (µSTX per byte) × the call's size, never under `defaultFee` (1000 µSTX). */
  async suggestFees(): Promise<FeeParams> {
    const floor = this.config.defaultFee ?? 1000n;
    try {
      const rate = await this.api.feeRate();
      const fee = rate > 0 ? BigInt(Math.ceil(rate)) * ANCHOR_TX_BYTES : floor;
      return { maxFee: fee > floor ? fee : floor, priorityFee: 0n };
    } catch (e) {
      if (e instanceof StacksApiUnavailable && e.reason === 'rate-limited') throw this.rateLimited(e);
      return { maxFee: floor, priorityFee: 0n };
    }
  }

  /** Signs `(anchor root)`; `root` must be exactly 32 bytes. `txHash` is `0x` + the SIP-005 txid. */
  async signAnchor(root: Uint8Array, nonce: bigint, fee: FeeParams): Promise<SignedAnchorTx> {
    if (root.length !== 32) throw new Error(`anchor root must be 32 bytes, got ${root.length}`);
    return this.signCall(Cl.buffer(root), nonce, fee);
  }

  /**
   * Signs an `anchor` call with any buffer, bypassing the 32-byte guard: only for tests that must show the
   * contract (not this adapter) rejects wrong lengths.
   */
  async signAnchorUnchecked(root: Uint8Array, nonce: bigint, fee: FeeParams): Promise<SignedAnchorTx> {
    return this.signCall(Cl.buffer(root), nonce, fee);
  }

  private async signCall(
    arg: ReturnType<typeof Cl.buffer>,
    nonce: bigint,
    fee: FeeParams,
  ): Promise<SignedAnchorTx> {
    const tx = await makeContractCall({
      contractAddress: this.contractAddress,
      contractName: this.contractName,
      functionName: 'anchor',
      functionArgs: [arg],
      senderKey: this.config.privateKey,
      nonce,
      fee: fee.maxFee,
      network: this.config.network,
      postConditionMode: PostConditionMode.Deny,
      postConditions: [],
      validateWithAbi: false,
    });
    this.remember(tx.txid(), { root: `0x${arg.value.toLowerCase()}`, nonce });
    return { txHash: `0x${tx.txid()}`, raw: tx.serializeBytes(), nonce, fee };
  }

  async broadcast(raw: Uint8Array): Promise<BroadcastResult> {
    const txid = this.rememberRaw(raw);
    let answer: Awaited<ReturnType<StacksAnchoringClient['broadcast']>>;
    try {
      answer = await this.api.broadcast(raw);
    } catch (e) {
      const reason = this.redact(errorMessage(e));
      if (e instanceof StacksApiUnavailable && e.reason === 'rate-limited') {
        return { ok: false, kind: 'rate-limited', reason, retryAfterMs: e.retryAfterMs ?? 0 };
      }
      return { ok: false, kind: 'unreachable', reason };
    }
    if (answer.accepted) return { ok: true };
    const refusal = classifyRejection(answer.body, txid);
    return refusal.ok ? refusal : { ...refusal, reason: this.redact(refusal.reason) };
  }

  getStatus(txHash: string): Promise<TxStatus> {
    return this.guard(() => this.status(stripHex(txHash)));
  }

  private async status(txid: string): Promise<TxStatus> {
    const kind = await this.api.kind();
    if (kind !== 'node') {
      const tx = await this.api.transaction(txid);
      if (tx) return this.fromIndexer(tx);
    }
    return this.fromNode(txid, kind === 'node');
  }

  /** The port's status from an indexer's answer (module comment). */
  private async fromIndexer(tx: StacksTx): Promise<TxStatus> {
    switch (tx.status) {
      case 'pending':
        return { state: 'pending' };
      case 'success': {
        if (!tx.canonical) return { state: 'unknown' };
        if (tx.blockHeight === null) return { state: 'pending' };
        const root =
          (tx.resultHex ? anchoredRootOfResult(tx.resultHex) : null) ??
          rootOfCall(tx) ??
          this.rememberedRoot(tx);
        if (!root) throw new Error(`Stacks tx ${tx.txid}: no anchored root in its result or arguments`);
        const onChain = await readAnchor(this.api, this.config.contractId, root, this.senderAddress);
        if (!onChain) throw new Error(`root ${root} has no record in ${this.config.contractId}`);
        const tip = (await this.api.info()).stacksTipHeight;
        return {
          state: 'included',
          blockNumber: BigInt(tx.blockHeight),
          confirmations: Math.max(0, tip - tx.blockHeight + 1),
          anchoredRoot: root,
        };
      }
      case 'dropped_stale_garbage_collect':
        return { state: 'unknown' };
      case 'dropped_replace_by_fee':
      case 'dropped_replace_across_fork': {
        if (tx.replacedBy && (await this.isOurReplacement(tx, tx.replacedBy))) return { state: 'pending' };
        return {
          state: 'failed',
          reason: `${tx.status}: replaced by ${tx.replacedBy ?? 'an unnamed transaction'}, not one anchoring this root`,
        };
      }
      default:
        // abort_by_response, abort_by_post_condition, problematic_skipped, dropped_too_expensive, dropped_problematic
        return { state: 'failed', reason: `${tx.status}: ${tx.resultRepr ?? ''}`.trim() };
    }
  }

  /** A replacement sent by this signer calling `anchor` with the same root as `tx`. */
  private async isOurReplacement(tx: StacksTx, replacement: string): Promise<boolean> {
    const root = rootOfCall(tx) ?? this.rememberedRoot(tx);
    if (!root) return false;
    const other = await this.api.transaction(replacement);
    return (
      other !== null &&
      other.sender === this.senderAddress &&
      other.contractCall?.contractId === this.config.contractId &&
      other.contractCall.functionName === 'anchor' &&
      (rootOfCall(other) ?? this.rememberedRoot(other)) === root
    );
  }

  /** The port's status from the node alone (module comment). */
  private async fromNode(txid: string, nodeOnly: boolean): Promise<TxStatus> {
    const facts = this.remembered.get(txid);
    if (!facts) return { state: 'unknown' };
    const confirmed = await this.api.accountNonce(this.senderAddress);
    if (confirmed <= facts.nonce) return nodeOnly ? { state: 'pending' } : { state: 'unknown' };
    const record = await readAnchor(this.api, this.config.contractId, facts.root, this.senderAddress);
    if (!record) {
      return {
        state: 'failed',
        reason: `nonce ${facts.nonce} was used and ${facts.root} has no record in ${this.config.contractId}: the transaction was dropped, replaced or aborted`,
      };
    }
    if (!nodeOnly) {
      // The index has the block that recorded the root and does not know this transaction: another one (its
      // replacement) recorded it. Only an index behind that block leaves the node's word to count meanwhile.
      const indexed = (await this.api.hiroStatus()).tipHeight;
      if (indexed !== null && indexed >= record.height) return { state: 'unknown' };
    }
    const tip = (await this.api.info()).stacksTipHeight;
    return {
      state: 'included',
      blockNumber: BigInt(record.height),
      confirmations: Math.max(0, tip - record.height + 1),
      anchoredRoot: facts.root,
    };
  }

  /** `get-anchor` read-only call; `undefined` when the root is not recorded. */
  readAnchor(rootHex: string): Promise<{ height: bigint; sender: string } | undefined> {
    return this.guard(async () => {
      const record = await readAnchor(this.api, this.config.contractId, rootHex, this.senderAddress);
      return record ? { height: BigInt(record.height), sender: record.sender } : undefined;
    });
  }

  private remember(txid: string, facts: AnchorTxFacts): void {
    this.remembered.delete(txid);
    this.remembered.set(txid, facts);
    if (this.remembered.size > MAX_REMEMBERED_TXS) {
      const oldest = this.remembered.keys().next().value;
      if (oldest !== undefined) this.remembered.delete(oldest);
    }
  }

  /** Remembers a signed `anchor` call's root and nonce (bytes sent again after a restart); its txid or ''. */
  private rememberRaw(raw: Uint8Array): string {
    try {
      const tx = deserializeTransaction(raw);
      const payload = tx.payload;
      const arg = payload.payloadType === PayloadType.ContractCall ? payload.functionArgs[0] : undefined;
      if (arg?.type === ClarityType.Buffer) {
        this.remember(tx.txid(), {
          root: `0x${arg.value.toLowerCase()}`,
          nonce: BigInt(tx.auth.spendingCondition.nonce),
        });
      }
      return tx.txid();
    } catch {
      return '';
    }
  }

  private rememberedRoot(tx: StacksTx): string | null {
    return this.remembered.get(stripHex(tx.txid))?.root ?? null;
  }

  /** Why the endpoint contradicts the configuration, as a `StacksConfigError`; undefined for unavailability. */
  private configError(e: unknown, setting: StacksApiKindSetting): StacksConfigError | undefined {
    const url = this.shownUrl();
    if (e instanceof StacksWrongKind) {
      const found =
        e.found === 'none' ? 'neither a Hiro API nor a stacks-node' : `${describeStacksApiKind(e.found)}`;
      const advice =
        e.found === 'none'
          ? 'set STACKS_API_URL to a stacks-node (its RPC port) or a Hiro API'
          : `set STACKS_API_KIND=${e.found} (or auto)`;
      return new StacksConfigError(
        `STACKS_API_KIND=${setting}, but ${url} is ${found} (${e.message}): ${advice}`,
      );
    }
    if (e instanceof StacksApiUnavailable && e.reason === 'gone') {
      return new StacksConfigError(
        `STACKS_API_KIND=${setting}, but ${url} answers 410 Gone on its v1 routes (${e.message}): ` +
          'set STACKS_API_KIND=hiro-v3 (or auto) for a Hiro API with v3 routes, or node to use only its /v2 routes',
      );
    }
    return undefined;
  }

  private shownUrl(): string {
    return redactText(this.config.apiUrl.replace(/\/+$/, ''), this.secrets);
  }

  private redact(text: string): string {
    return redactText(this.endpoint.redact(text), this.secrets);
  }

  private rateLimited(e: StacksApiUnavailable): ChainRateLimitedError {
    return new ChainRateLimitedError(
      this.redact(`Stacks API ${this.shownUrl()}: ${e.message}`),
      e.retryAfterMs ?? 0,
    );
  }

  /**
   * Runs `call`; a rate limit becomes `ChainRateLimitedError`, a configuration error stays one, anything else
   * leaves redacted (`redactError`: the URL's secrets and the API key).
   */
  private async guard<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (e) {
      if (e instanceof StacksApiUnavailable && e.reason === 'rate-limited') throw this.rateLimited(e);
      if (e instanceof StacksConfigError) throw new StacksConfigError(this.redact(e.message));
      if (e instanceof StacksApiUnavailable) {
        throw new StacksApiUnavailable(e.reason, this.redact(`Stacks API ${this.shownUrl()}: ${e.message}`), {
          ...(e.status === undefined ? {} : { status: e.status }),
        });
      }
      throw redactError(e, this.secrets);
    }
  }
}

/** The root of an `anchor` call from its first argument (`(buff 32)` serialized), or null. */
function rootOfCall(tx: StacksTx): string | null {
  const arg = tx.contractCall?.functionName === 'anchor' ? tx.contractCall.args?.[0] : undefined;
  if (!arg) return null;
  const bytes = stripHex(arg);
  // `(buff 32)`: type 0x02, length 0x00000020, then the 32 bytes.
  return /^0200000020[0-9a-f]{64}$/.test(bytes) ? `0x${bytes.slice(10)}` : null;
}

function networkOf(id: number): string {
  if (id === CHAIN_IDS.mainnet) return 'mainnet';
  if (id === CHAIN_IDS.testnet) return 'testnet or a devnet';
  return 'an unknown network';
}

function hexId(n: number): string {
  return `0x${n.toString(16).padStart(8, '0')}`;
}

/**
 * Maps a stacks-core rejection body `{ error, reason, reason_data, txid }` to the port's kinds:
 * BadNonce → nonce-too-low; ConflictingNonceInMempool → already-known; FeeTooLow → underpriced;
 * anything else (NotEnoughFunds, BadFunctionArgument, TooMuchChaining, ...) → rejected. The node's reason and
 * reason_data are kept verbatim in `reason`.
 */
export function classifyRejection(body: string, txid = ''): BroadcastResult {
  let parsed: { reason?: unknown; reason_data?: unknown; error?: unknown } = {};
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    return { ok: false, kind: 'rejected', reason: body.slice(0, 300) || 'empty rejection body' };
  }
  const name = typeof parsed.reason === 'string' ? parsed.reason : 'Unknown';
  const reason = `${name}${parsed.reason_data ? ` ${JSON.stringify(parsed.reason_data)}` : ''}${txid ? ` (tx ${txid})` : ''}`;
  switch (name) {
    case 'BadNonce':
      return { ok: false, kind: 'nonce-too-low', reason };
    case 'ConflictingNonceInMempool':
      return { ok: false, kind: 'already-known', reason };
    case 'FeeTooLow':
      return { ok: false, kind: 'underpriced', reason };
    default:
      return { ok: false, kind: 'rejected', reason };
  }
}
