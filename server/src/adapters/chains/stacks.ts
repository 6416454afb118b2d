/**
 * Stacks implementation of the chain port: anchors a 32-byte root with a contract call
 * `(anchor (root (buff 32)))` to the notary contract (`server/contracts/notary.clar`), built and signed offline
 * with `@stacks/transactions` 7.6 (explicit nonce and fee, post-condition mode deny, SIP-005 serialization).
 *
 * Node access (Stacks node RPC API of stacks-core, plus the Hiro API for transaction status):
 * - `POST /v2/transactions` (octet-stream): 200 → the txid as a JSON string; 400 → `{ error, reason, reason_data,
 *   txid }`; the reason is read from that body and classified, never assumed.
 * - `GET /extended/v1/tx/0x<txid>`: `tx_status` pending | success | abort_by_response | abort_by_post_condition |
 *   dropped_*; `block_height`; `tx_result.repr`.
 * - `GET /v2/info` (`stacks_tip_height`) for confirmations; `POST /v2/contracts/call-read/<addr>/<name>/get-anchor`
 *   to read the anchored root back.
 * - `GET /extended/v1/address/<addr>/nonces` (`possible_next_nonce`, mempool included), falling back to
 *   `GET /v2/accounts/<addr>?proof=0` (`nonce`, confirmed only) on a bare stacks-node.
 * - `GET /v2/fees/transfer` (µSTX per byte) for fees.
 *
 * Errors: network failures of `broadcast` become `{ ok: false, kind: 'unreachable' }`; the read methods throw
 * `StacksApiError` (HTTP status + body) or the fetch error, which the pipeline retries. Whatever leaves the
 * adapter (thrown errors, refusal reasons) is redacted of the API URL's secrets (`ChainEndpoint`): a key in
 * the path (Hiro Platform's `/v1/ext/<key>/…`), the query or `user:pass@` (sent as Basic authentication).
 */
import {
  Cl,
  ClarityType,
  cvToString,
  deserializeTransaction,
  hexToCV,
  makeContractCall,
  PostConditionMode,
  privateKeyToAddress,
  serializeCV,
} from '@stacks/transactions';
import type {
  AnchorChain,
  BroadcastResult,
  ChainNetworkInfo,
  FeeParams,
  SignedAnchorTx,
  TxStatus,
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
  /** Fallback fee in µSTX when the node gives no estimate. Default 1000. */
  defaultFee?: bigint;
  /** Request timeout in ms. Default 10 s. */
  timeoutMs?: number;
}

/** A node answered with an unexpected HTTP status. */
export class StacksApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    what: string,
  ) {
    super(`Stacks API ${what}: HTTP ${status}: ${body.slice(0, 300)}`);
  }
}

/** Chain ids (SIP-005 `chain_id`): mainnet 0x00000001, testnet and devnet 0x80000000. */
const CHAIN_IDS: Record<StacksNetworkName, number> = {
  mainnet: 0x00000001,
  testnet: 0x80000000,
  devnet: 0x80000000,
};
/** Approximate serialized size of the anchor contract call (single-sig), for the per-byte fee estimate. */
const ANCHOR_TX_BYTES = 260n;

interface TxResponse {
  tx_status?: string;
  block_height?: number;
  tx_result?: { hex?: string; repr?: string };
}

/** Stacks adapter of `AnchorChain` (see the module comment for the node routes it uses). */
export class StacksNotaryChain implements AnchorChain {
  readonly kind = 'stacks' as const;
  private readonly apiUrl: string;
  private readonly endpoint: ChainEndpoint;
  private readonly contractAddress: string;
  private readonly contractName: string;
  readonly senderAddress: string;

  constructor(private readonly config: StacksNotaryConfig) {
    this.endpoint = new ChainEndpoint(config.apiUrl);
    this.apiUrl = this.endpoint.fetchUrl.replace(/\/+$/, '');
    const [address, name, ...rest] = config.contractId.split('.');
    if (!address || !name || rest.length > 0) throw new Error(`bad Stacks contract id: ${config.contractId}`);
    this.contractAddress = address;
    this.contractName = name;
    this.senderAddress = privateKeyToAddress(config.privateKey, config.network);
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

  chainNonce(): Promise<bigint> {
    return this.endpoint.guard(() => this.nextNonce());
  }

  private async nextNonce(): Promise<bigint> {
    const res = await this.request('GET', `/extended/v1/address/${this.senderAddress}/nonces`);
    if (res.status === 200) {
      const body = JSON.parse(res.body) as { possible_next_nonce?: number };
      if (typeof body.possible_next_nonce === 'number') return BigInt(body.possible_next_nonce);
    }
    const acc = await this.request('GET', `/v2/accounts/${this.senderAddress}?proof=0`);
    if (acc.status !== 200) throw new StacksApiError(acc.status, acc.body, 'accounts');
    const body = JSON.parse(acc.body) as { nonce?: number };
    if (typeof body.nonce !== 'number') throw new StacksApiError(acc.status, acc.body, 'accounts (no nonce)');
    return BigInt(body.nonce);
  }

  /** `/v2/fees/transfer` (µSTX per byte) × the call's size, never under `defaultFee` (1000 µSTX). */
  async suggestFees(): Promise<FeeParams> {
    const floor = this.config.defaultFee ?? 1000n;
    try {
      const res = await this.request('GET', '/v2/fees/transfer');
      const rate = res.status === 200 ? Number(JSON.parse(res.body)) : Number.NaN;
      const fee = Number.isFinite(rate) && rate > 0 ? BigInt(Math.ceil(rate)) * ANCHOR_TX_BYTES : floor;
      return { maxFee: fee > floor ? fee : floor, priorityFee: 0n };
    } catch {
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
    return { txHash: `0x${tx.txid()}`, raw: tx.serializeBytes(), nonce, fee };
  }

  async broadcast(raw: Uint8Array): Promise<BroadcastResult> {
    let res: { status: number; body: string };
    try {
      res = await this.request('POST', '/v2/transactions', raw);
    } catch (err) {
      return { ok: false, kind: 'unreachable', reason: this.endpoint.redact(errorText(err)) };
    }
    if (res.status === 200) return { ok: true };
    if (res.status >= 500 || res.status === 429) {
      const reason = this.endpoint.redact(`HTTP ${res.status}: ${res.body.slice(0, 300)}`);
      return { ok: false, kind: 'unreachable', reason };
    }
    const refusal = classifyRejection(res.body, stripHex(deserializeTxidSafe(raw)));
    return refusal.ok ? refusal : { ...refusal, reason: this.endpoint.redact(refusal.reason) };
  }

  getStatus(txHash: string): Promise<TxStatus> {
    return this.endpoint.guard(() => this.status(txHash));
  }

  private async status(txHash: string): Promise<TxStatus> {
    const txid = stripHex(txHash);
    const res = await this.request('GET', `/extended/v1/tx/0x${txid}`);
    if (res.status === 404) return { state: 'unknown' };
    if (res.status !== 200) throw new StacksApiError(res.status, res.body, 'tx');
    const tx = JSON.parse(res.body) as TxResponse;
    switch (tx.tx_status) {
      case 'pending':
        return { state: 'pending' };
      case 'success': {
        if (typeof tx.block_height !== 'number') return { state: 'pending' };
        const tip = await this.tipHeight();
        const anchoredRoot = await this.anchoredRootOf(tx);
        return {
          state: 'included',
          blockNumber: BigInt(tx.block_height),
          confirmations: Math.max(0, tip - tx.block_height + 1),
          anchoredRoot,
        };
      }
      case undefined:
        return { state: 'unknown' };
      default:
        // abort_by_response, abort_by_post_condition, dropped_replace_by_fee, dropped_stale_garbage_collect, ...
        return { state: 'failed', reason: `${tx.tx_status}: ${tx.tx_result?.repr ?? ''}`.trim() };
    }
  }

  /**
   * Reads `(get-anchor root)` for the root in the transaction's result `(ok (tuple ... (root 0x..)))` and returns
   * it when the chain has it on record; throws when the contract has no record (the inclusion is not trusted).
   */
  private async anchoredRootOf(tx: TxResponse): Promise<string> {
    const hex = tx.tx_result?.hex;
    if (!hex) throw new Error('Stacks tx without tx_result.hex');
    const result = hexToCV(hex);
    if (result.type !== ClarityType.ResponseOk || result.value.type !== ClarityType.Tuple) {
      throw new Error(`unexpected anchor result ${cvToString(result)}`);
    }
    const root = result.value.value.root;
    if (!root || root.type !== ClarityType.Buffer) throw new Error('anchor result without root');
    const onChain = await this.getAnchor(root.value);
    if (!onChain) throw new Error(`root 0x${root.value} has no record in ${this.config.contractId}`);
    return `0x${root.value.toLowerCase()}`;
  }

  /** `get-anchor` read-only call; `undefined` when the root is not recorded. */
  readAnchor(rootHex: string): Promise<{ height: bigint; sender: string } | undefined> {
    return this.endpoint.guard(() => this.getAnchor(rootHex));
  }

  private async getAnchor(rootHex: string): Promise<{ height: bigint; sender: string } | undefined> {
    const path = `/v2/contracts/call-read/${this.contractAddress}/${this.contractName}/get-anchor`;
    const res = await this.request(
      'POST',
      path,
      JSON.stringify({
        sender: this.senderAddress,
        arguments: [`0x${serializeCV(Cl.bufferFromHex(stripHex(rootHex)))}`],
      }),
    );
    if (res.status !== 200) throw new StacksApiError(res.status, res.body, 'call-read');
    const body = JSON.parse(res.body) as { okay?: boolean; result?: string; cause?: string };
    if (!body.okay || !body.result) throw new Error(`call-read get-anchor failed: ${body.cause ?? res.body}`);
    const cv = hexToCV(body.result);
    if (cv.type === ClarityType.OptionalNone) return undefined;
    if (cv.type !== ClarityType.OptionalSome || cv.value.type !== ClarityType.Tuple) {
      throw new Error(`unexpected get-anchor result ${cvToString(cv)}`);
    }
    const { height, sender } = cv.value.value;
    if (height?.type !== ClarityType.UInt || sender?.type !== ClarityType.PrincipalStandard) {
      throw new Error(`unexpected get-anchor result ${cvToString(cv)}`);
    }
    return { height: BigInt(height.value), sender: sender.value };
  }

  private async tipHeight(): Promise<number> {
    const res = await this.request('GET', '/v2/info');
    if (res.status !== 200) throw new StacksApiError(res.status, res.body, 'info');
    const body = JSON.parse(res.body) as { stacks_tip_height?: number };
    if (typeof body.stacks_tip_height !== 'number') throw new StacksApiError(res.status, res.body, 'info');
    return body.stacks_tip_height;
  }

  private async request(
    method: 'GET' | 'POST',
    path: string,
    body?: Uint8Array | string,
  ): Promise<{ status: number; body: string }> {
    const headers: Record<string, string> = { ...this.endpoint.headers };
    if (body instanceof Uint8Array) headers['content-type'] = 'application/octet-stream';
    else if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.apiUrl}${path}`, {
      method,
      headers,
      body: body instanceof Uint8Array ? Buffer.from(body) : body,
      signal: AbortSignal.timeout(this.config.timeoutMs ?? 10_000),
    });
    return { status: res.status, body: await res.text() };
  }
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

function deserializeTxidSafe(raw: Uint8Array): string {
  try {
    return deserializeTransaction(raw).txid();
  } catch {
    return '';
  }
}

function stripHex(h: string): string {
  return h.toLowerCase().replace(/^0x/, '');
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ? `${err.message}: ${cause.code}` : err.message;
  }
  return String(err);
}
