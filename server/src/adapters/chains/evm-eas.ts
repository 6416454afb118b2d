import { describeFetchError } from '@notary/shared';
import { readBounded } from '@notary/shared/fetch-body';
import { MAX_RESPONSE_BYTES, parseRetryAfter } from '@notary/trust/http';
import {
  AbiCoder,
  Contract,
  FetchRequest,
  type GetUrlResponse,
  getBytes,
  hexlify,
  Interface,
  JsonRpcProvider,
  Network,
  Transaction,
  Wallet,
  ZeroAddress,
  ZeroHash,
} from 'ethers';
import {
  type AnchorChain,
  type BroadcastResult,
  type ChainNetworkInfo,
  ChainRateLimitedError,
  EAS_SCHEMA,
  EAS_SCHEMA_UID,
  type FeeParams,
  type SignedAnchorTx,
  type TxStatus,
} from '../../ports/chains';
import { easAbi, schemaRegistryAbi } from './eas-abi';
import { ChainEndpoint } from './endpoint';
import {
  isRateLimitRpcError,
  RateLimitGate,
  type RateLimitGateOptions,
  type RpcErrorLike,
  rpcBackoffHint,
} from './rate-limit';

/**
 * EVM implementation of the chain port: one EAS attestation per batch (Ethereum Attestation Service,
 * `EAS.attest`, contracts `@ethereum-attestation-service/eas-contracts` 1.9.0), sent as a raw EIP-1559
 * (type 2) transaction signed here with ethers 6.
 *
 * Schema (registered once per SchemaRegistry, see `ensureSchema`):
 * - fields: `bytes32 merkleRoot`: the root of the batch's Merkle tree (`domain/anchoring/merkle.ts`), which for
 *   a batch of one is the document's SHA-256 itself;
 * - resolver: none (zero address); revocable: false (an anchor is never withdrawn); no expiration; recipient
 *   zero; refUID zero; value 0.
 * - UID = `keccak256(abi.encodePacked(schema, resolver, revocable))` (SchemaRegistry._getUID), here
 *   `keccak256(abi.encodePacked("bytes32 merkleRoot", address(0), false))`, the same on every chain:
 *   `EAS_SCHEMA_UID` (`ports/chains.ts`).
 * No `leafCount` field: it is not needed to verify a proof (a proof carries its own path) and it would widen
 * the port's `signAnchor(root, ...)`; the batch size stays in our database.
 *
 * Attester: the signer's address. Anyone can read an anchor back with `getAttestation(uid)` and decode `data`
 * as `(bytes32)`; attestation pages are `<attestationScanPrefix>/<uid>` (easscan).
 */

/** Used when gas cannot be estimated at signing time (one attestation of our schema uses about 180k gas: `npm run bench -- anchor-cost`). */
export const FALLBACK_GAS_LIMIT = 350_000n;
/** Multiplier applied to the first successful estimate, in percent. */
const GAS_MARGIN_PERCENT = 130n;

export interface EvmEasConfig {
  /** JSON-RPC HTTP endpoint. */
  rpcUrl: string;
  /** Signer key (0x + 64 hex). */
  privateKey: string;
  easAddress: string;
  schemaRegistryAddress: string;
  /** Optional: must equal `EAS_SCHEMA_UID` if given (a different schema cannot be attested by this adapter). */
  schemaUid?: string;
  network: string;
  chainId: number;
  explorerTxPrefix: string;
  attestationScanPrefix: string;
  /** Fixed gas limit; default: estimate once (+30%), `FALLBACK_GAS_LIMIT` when estimation fails. */
  gasLimit?: bigint;
  /** Timeout of one JSON-RPC call (an HTTP request) in ms. Default 10,000. */
  rpcTimeoutMs?: number;
  /**
   * Backoff after the provider rate-limits us (`RateLimitGate`): its clock and bounds. Default: the system
   * clock, 1 s doubling up to 60 s without a `Retry-After`, a `Retry-After` honoured up to 10 minutes.
   */
  rateLimit?: RateLimitGateOptions;
}

/** Outcome of `ensureSchema`. */
export interface EnsureSchemaResult {
  uid: string;
  /** True if this call registered it (then `txHash` is the registration). */
  registered: boolean;
  txHash?: string;
}

/**
 * Maps a node's refusal text to the port's kinds (geth, Nethermind, Erigon, Hardhat/EDR and Anvil wordings).
 * A fee cap below the next block's base fee is `underpriced` (geth keeps such a transaction in its pool until
 * the base fee falls; Hardhat's automine refuses it with "too low for the next block"): a higher fee is the
 * answer, never a refusal that fails the batch.
 */
export function classifyRefusal(message: string): Exclude<BroadcastResult, { ok: true }>['kind'] {
  const m = message.toLowerCase();
  if (m.includes('nonce too low') || m.includes('nonce is too low') || m.includes('oldnonce'))
    return 'nonce-too-low';
  if (m.includes('already known') || m.includes('known transaction') || m.includes('already imported'))
    return 'already-known';
  if (
    m.includes('underpriced') ||
    m.includes('fee too low') ||
    m.includes('feetoolow') ||
    m.includes('too low for the next block') ||
    m.includes('less than block base fee') ||
    m.includes('fee cap less than')
  )
    return 'underpriced';
  return 'rejected';
}

interface RpcErrorBody {
  error?: { code?: number; message?: string; data?: unknown };
  result?: unknown;
}

/** The JSON-RPC errors in a response body (one object or a batch array); empty when it is not JSON. */
function rpcErrorsOf(body: Uint8Array | null): RpcErrorLike[] {
  // Rate-limit answers are small; a large body is a real answer, not worth parsing twice.
  if (!body || body.length > 65_536) return [];
  const text = Buffer.from(body).toString('utf8');
  if (!text.includes('"error"')) return [];
  try {
    const parsed = JSON.parse(text) as unknown;
    const items = Array.isArray(parsed) ? parsed : [parsed];
    return items
      .map((item) => (typeof item === 'object' && item !== null ? (item as RpcErrorBody).error : undefined))
      .filter((e): e is NonNullable<RpcErrorBody['error']> => typeof e === 'object' && e !== null);
  } catch {
    return [];
  }
}

/**
 * Errors leave this adapter redacted (`ChainEndpoint`): thrown errors are plain `Error`s with the RPC URL's
 * key hidden from message and stack (ethers' own fields, which repeat the URL, are dropped), and refusal
 * reasons are redacted text.
 *
 * Rate limits (`rate-limit.ts`): every HTTP answer is looked at; a 429, or a JSON-RPC rate-limit error, closes
 * this endpoint's `RateLimitGate` for the provider's `Retry-After` (or a doubling backoff). While it is
 * closed nothing is sent: reads throw `ChainRateLimitedError` and `broadcast` answers `rate-limited`, both
 * with the wait. ethers' own 429 retry is off (it reads `Retry-After` as milliseconds and tries 12 times).
 */
export class EvmEasChain implements AnchorChain {
  readonly kind = 'evm' as const;
  readonly provider: JsonRpcProvider;
  private readonly endpoint: ChainEndpoint;
  private readonly wallet: Wallet;
  private readonly eas: Interface;
  private readonly schemaUid: string;
  private readonly gate: RateLimitGate;
  private readonly timeoutMs: number;
  /** What the provider said when it last rate-limited us (for messages). */
  private lastLimit = '';
  private estimatedGas: bigint | undefined;
  private readonly config: EvmEasConfig;

  /** Throws `Error` when `schemaUid` is given and is not `EAS_SCHEMA_UID`, or the key is malformed. */
  constructor(config: EvmEasConfig) {
    this.config = config;
    if (config.schemaUid !== undefined && config.schemaUid.toLowerCase() !== EAS_SCHEMA_UID) {
      throw new Error(
        `EVM schema UID ${config.schemaUid} is not the UID of "${EAS_SCHEMA}" (no resolver, not revocable): ${EAS_SCHEMA_UID}`,
      );
    }
    this.schemaUid = EAS_SCHEMA_UID;
    this.endpoint = new ChainEndpoint(config.rpcUrl);
    this.gate = new RateLimitGate(config.rateLimit);
    this.timeoutMs = config.rpcTimeoutMs ?? 10_000;
    // staticNetwork: no chain-id probe loop when the node is down; cacheTimeout -1: every read hits the node
    // (a cached "no receipt" or nonce would hide a change the pipeline polls for).
    this.provider = new JsonRpcProvider(this.connection(), Network.from(config.chainId), {
      staticNetwork: true,
      cacheTimeout: -1,
    });
    this.wallet = new Wallet(config.privateKey);
    this.eas = new Interface(easAbi());
  }

  /** The attester's address (checksummed). */
  get address(): string {
    return this.wallet.address;
  }

  /**
   * The provider's HTTP connection: the URL without credentials (sent as a header, as `broadcast` does), the
   * call timeout, no retry of a 429 by ethers, and every answer shown to the rate-limit gate first.
   */
  private connection(): FetchRequest {
    const request = new FetchRequest(this.endpoint.fetchUrl);
    for (const [name, value] of Object.entries(this.endpoint.headers)) request.setHeader(name, value);
    request.timeout = this.timeoutMs;
    request.retryFunc = async () => false;
    const send = FetchRequest.createGetUrlFunc();
    request.getUrlFunc = async (req, signal) => {
      const response = await send(req, signal);
      this.observe(response);
      return response;
    };
    return request;
  }

  /** Closes the gate when an answer is a rate limit (HTTP 429, a 503 with `Retry-After`, a JSON-RPC error). */
  private observe(response: GetUrlResponse): void {
    const status = response.statusCode;
    const header = response.headers['retry-after'];
    const limit = rpcErrorsOf(response.body).find((e) => isRateLimitRpcError(e));
    let what: string;
    if (status === 429 || (status === 503 && header !== undefined)) {
      what = `HTTP ${status}${header === undefined ? '' : `, Retry-After: ${header}`}`;
    } else if (limit) {
      what = `JSON-RPC error ${String(limit.code)}: ${String(limit.message)}`;
    } else {
      return;
    }
    this.limited(what, parseRetryAfter(header, this.gate.now()) ?? rpcBackoffHint(limit));
  }

  private limited(what: string, hintMs: number | undefined): number {
    this.lastLimit = this.endpoint.redact(what.slice(0, 200));
    return this.gate.limited(hintMs);
  }

  private rateLimitedError(): ChainRateLimitedError {
    const wait = this.gate.waitMs();
    return new ChainRateLimitedError(
      `rate-limited by the RPC endpoint (${this.lastLimit}): next call in ${Math.ceil(wait / 1000)} s`,
      wait,
    );
  }

  /**
   * Runs `call` against the node unless the rate-limit gate is closed (then `ChainRateLimitedError` at once,
   * nothing sent); a call the provider rate-limited throws `ChainRateLimitedError`, any other failure its
   * redacted error (`ChainEndpoint.guard`).
   */
  private async rpc<T>(call: () => Promise<T>): Promise<T> {
    if (this.gate.waitMs() > 0) throw this.rateLimitedError();
    const before = this.gate.limits;
    try {
      const result = await this.endpoint.guard(call);
      this.gate.succeeded();
      return result;
    } catch (e) {
      if (this.gate.limits !== before) throw this.rateLimitedError();
      throw e;
    }
  }

  info(): ChainNetworkInfo {
    const { network, chainId, explorerTxPrefix, attestationScanPrefix, easAddress } = this.config;
    return { network, chainId, explorerTxPrefix, attestationScanPrefix, contract: easAddress };
  }

  /**
   * Registers `EAS_SCHEMA` when `getSchema(EAS_SCHEMA_UID)` says it is missing, and waits for the receipt.
   * Call it at start, before the pipeline reads `chainNonce()`: it spends one nonce of the signer.
   * Throws on RPC errors, on a failed registration, or if the registry returns a UID other than ours.
   */
  ensureSchema(): Promise<EnsureSchemaResult> {
    return this.rpc(() => this.registerSchema());
  }

  private async registerSchema(): Promise<EnsureSchemaResult> {
    const signer = this.wallet.connect(this.provider);
    const registry = new Contract(this.config.schemaRegistryAddress, schemaRegistryAbi(), signer);
    const existing = (await registry.getFunction('getSchema').staticCall(this.schemaUid)) as { uid: string };
    if (existing.uid === this.schemaUid) return { uid: this.schemaUid, registered: false };
    const tx = await registry.getFunction('register').send(EAS_SCHEMA, ZeroAddress, false);
    const receipt = await tx.wait();
    if (receipt === null || receipt.status !== 1) throw new Error(`schema registration ${tx.hash} failed`);
    const check = (await registry.getFunction('getSchema').staticCall(this.schemaUid)) as { uid: string };
    if (check.uid !== this.schemaUid) throw new Error(`registered schema UID differs from ${this.schemaUid}`);
    return { uid: this.schemaUid, registered: true, txHash: tx.hash };
  }

  /** `eth_getTransactionCount(address, "pending")`. Throws on RPC errors (`ChainRateLimitedError` for a limit). */
  chainNonce(): Promise<bigint> {
    return this.rpc(async () =>
      BigInt(await this.provider.getTransactionCount(this.wallet.address, 'pending')),
    );
  }

  /**
   * EIP-1559 fees for the next block, wei per gas: tip = `eth_maxPriorityFeePerGas`, maxFee = 2 × the next
   * block's base fee + tip, the next base fee being the last entry of `eth_feeHistory(1, "latest")`'s
   * `baseFeePerGas` (Ethereum JSON-RPC spec: it lists one more than the blocks asked for, the block after the
   * newest), so a base fee that just rose is counted before a block shows it. Without those methods: ethers
   * `getFeeData` (latest block's base fee), else `gasPrice` for both. Throws on RPC errors
   * (`ChainRateLimitedError` for a limit).
   */
  suggestFees(): Promise<FeeParams> {
    return this.rpc(() => this.feeData());
  }

  private async feeData(): Promise<FeeParams> {
    try {
      const [history, tip] = (await Promise.all([
        this.provider.send('eth_feeHistory', ['0x1', 'latest', []]),
        this.provider.send('eth_maxPriorityFeePerGas', []),
      ])) as [{ baseFeePerGas?: unknown }, unknown];
      const bases = Array.isArray(history.baseFeePerGas) ? history.baseFeePerGas : [];
      const next = bases.at(-1);
      if (typeof next === 'string' && typeof tip === 'string') {
        const priorityFee = BigInt(tip);
        return { maxFee: 2n * BigInt(next) + priorityFee, priorityFee };
      }
    } catch (e) {
      // A limit is not a missing method: no second call into a closed gate.
      if (this.gate.waitMs() > 0) throw e;
    }
    const f = await this.provider.getFeeData();
    const maxFee = f.maxFeePerGas ?? f.gasPrice;
    const priorityFee = f.maxPriorityFeePerGas ?? f.gasPrice;
    if (maxFee === null || priorityFee === null) throw new Error('the node reports no fee data');
    return { maxFee, priorityFee };
  }

  /** ABI-encoded calldata of `EAS.attest` for `root` (exactly 32 bytes; `TypeError` otherwise). */
  attestCalldata(root: Uint8Array): string {
    if (root.length !== 32) throw new TypeError(`anchored root must be 32 bytes, got ${root.length}`);
    const data = AbiCoder.defaultAbiCoder().encode(['bytes32'], [root]);
    return this.eas.encodeFunctionData('attest', [
      {
        schema: this.schemaUid,
        data: {
          recipient: ZeroAddress,
          expirationTime: 0n,
          revocable: false,
          refUID: ZeroHash,
          data,
          value: 0n,
        },
      },
    ]);
  }

  private async gasLimit(calldata: string): Promise<bigint> {
    if (this.config.gasLimit !== undefined) return this.config.gasLimit;
    if (this.estimatedGas !== undefined) return this.estimatedGas;
    // The provider asked us to wait: no call, the fallback limit (the next signature estimates again).
    if (this.gate.waitMs() > 0) return FALLBACK_GAS_LIMIT;
    try {
      const est = await this.provider.estimateGas({
        from: this.wallet.address,
        to: this.config.easAddress,
        data: calldata,
      });
      this.estimatedGas = (est * GAS_MARGIN_PERCENT) / 100n;
      return this.estimatedGas;
    } catch {
      return FALLBACK_GAS_LIMIT;
    }
  }

  /**
   * Signs (EIP-1559, type 2) `EAS.attest` of `root` with the given nonce and fees (wei per gas); nothing is sent.
   * Gas limit: `config.gasLimit`, else the first estimate +30% (cached), else `FALLBACK_GAS_LIMIT`; the
   * estimate is the only network call and is skipped once cached (and while the provider rate-limits us). Throws `TypeError` for a root that is not
   * 32 bytes.
   */
  async signAnchor(root: Uint8Array, nonce: bigint, fee: FeeParams): Promise<SignedAnchorTx> {
    const data = this.attestCalldata(root);
    const gasLimit = await this.gasLimit(data);
    const tx = Transaction.from({
      type: 2,
      chainId: BigInt(this.config.chainId),
      nonce: Number(nonce),
      to: this.config.easAddress,
      data,
      value: 0n,
      gasLimit,
      maxFeePerGas: fee.maxFee,
      maxPriorityFeePerGas: fee.priorityFee,
    });
    const signed = await this.wallet.signTransaction(tx);
    const hash = Transaction.from(signed).hash;
    if (hash === null) throw new Error('signed transaction has no hash');
    return { txHash: hash.toLowerCase(), raw: getBytes(signed), nonce, fee };
  }

  /**
   * `eth_sendRawTransaction` over a plain HTTP POST, so that the node's own error text is what we classify.
   * Never throws: a JSON-RPC error is `rejected`/`nonce-too-low`/`already-known`/`underpriced` (see
   * `classifyRefusal`); no answer, a timeout, a non-JSON or HTTP error answer is `unreachable`; HTTP 429 (a
   * 503 with `Retry-After`, a JSON-RPC rate-limit error) is `rate-limited` with the wait, and so is any call
   * while the wait of the last one has not passed (then nothing is sent).
   * Note: re-sending bytes already mined answers `nonce-too-low` on most nodes: check `getStatus` first.
   */
  async broadcast(raw: Uint8Array): Promise<BroadcastResult> {
    if (this.gate.waitMs() > 0) {
      const e = this.rateLimitedError();
      return { ok: false, kind: 'rate-limited', reason: e.message, retryAfterMs: e.retryAfterMs };
    }
    let body: RpcErrorBody;
    try {
      const res = await fetch(this.endpoint.fetchUrl, {
        method: 'POST',
        headers: { ...this.endpoint.headers, 'content-type': 'application/json' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'eth_sendRawTransaction',
          params: [hexlify(raw)],
        }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      // A JSON-RPC answer is small: an endpoint cannot make the service hold more than MAX_RESPONSE_BYTES.
      const text = new TextDecoder().decode(await readBounded(res, MAX_RESPONSE_BYTES));
      const retryAfter = res.headers.get('retry-after') ?? undefined;
      let parsed: RpcErrorBody | undefined;
      try {
        parsed = JSON.parse(text) as RpcErrorBody;
      } catch {
        parsed = undefined;
      }
      const limit = isRateLimitRpcError(parsed?.error) ? parsed?.error : undefined;
      if (res.status === 429 || (res.status === 503 && retryAfter !== undefined) || limit) {
        const reason = this.endpoint.redact(`HTTP ${res.status}: ${text.slice(0, 200)}`);
        const wait = this.limited(
          `HTTP ${res.status}${retryAfter === undefined ? '' : `, Retry-After: ${retryAfter}`}`,
          parseRetryAfter(retryAfter, this.gate.now()) ?? rpcBackoffHint(limit),
        );
        return { ok: false, kind: 'rate-limited', reason, retryAfterMs: wait };
      }
      if (parsed === undefined || typeof parsed !== 'object' || parsed === null) {
        const reason = this.endpoint.redact(`HTTP ${res.status}: ${text.slice(0, 200)}`);
        return { ok: false, kind: 'unreachable', reason };
      }
      body = parsed;
    } catch (err) {
      return { ok: false, kind: 'unreachable', reason: this.endpoint.redact(describeFetchError(err)) };
    }
    this.gate.succeeded();
    if (body.error !== undefined) {
      const reason = this.endpoint.redact(body.error.message ?? JSON.stringify(body.error));
      return { ok: false, kind: classifyRefusal(reason), reason };
    }
    return { ok: true };
  }

  /**
   * Status of `txHash` from the node:
   * - `included` (status 1) with confirmations = latest block − receipt block + 1, the `Attested` event's UID
   *   (emitted by our EAS address under our schema), and `anchoredRoot` = `getAttestation(uid).data` decoded
   *   as `bytes32` (read back, not assumed);
   * - `failed` for a receipt with status 0, or a receipt without our `Attested` event;
   * - `pending` when the node knows the transaction but has no receipt;
   * - `unknown` when it knows neither (never sent, dropped, or its block was reorged away / reverted).
   * Throws on RPC errors (the caller retries; `ChainRateLimitedError` for a limit).
   */
  getStatus(txHash: string): Promise<TxStatus> {
    return this.rpc(() => this.status(txHash));
  }

  private async status(txHash: string): Promise<TxStatus> {
    const receipt = await this.provider.getTransactionReceipt(txHash);
    if (receipt === null) {
      const tx = await this.provider.getTransaction(txHash);
      return tx === null ? { state: 'unknown' } : { state: 'pending' };
    }
    if (receipt.status !== 1) return { state: 'failed', reason: `reverted in block ${receipt.blockNumber}` };
    let uid: string | undefined;
    for (const log of receipt.logs) {
      if (log.address.toLowerCase() !== this.config.easAddress.toLowerCase()) continue;
      const parsed = this.eas.parseLog({ topics: [...log.topics], data: log.data });
      if (parsed?.name === 'Attested' && parsed.args.getValue('schemaUID') === this.schemaUid) {
        uid = String(parsed.args.getValue('uid'));
        break;
      }
    }
    if (uid === undefined)
      return { state: 'failed', reason: 'no Attested event of our schema in the receipt' };
    const eas = new Contract(this.config.easAddress, this.eas, this.provider);
    const attestation = (await eas.getFunction('getAttestation').staticCall(uid)) as {
      uid: string;
      data: string;
    };
    if (attestation.uid !== uid) return { state: 'unknown' };
    const [root] = AbiCoder.defaultAbiCoder().decode(['bytes32'], attestation.data);
    const latest = await this.provider.getBlockNumber();
    return {
      state: 'included',
      blockNumber: BigInt(receipt.blockNumber),
      confirmations: Math.max(0, latest - receipt.blockNumber + 1),
      attestationUid: uid,
      anchoredRoot: String(root).toLowerCase(),
    };
  }

  /** Releases the provider (no timers left behind). */
  close(): void {
    this.provider.destroy();
  }
}
