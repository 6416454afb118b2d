import { readBounded } from '@notary/shared/fetch-body';
import { describeFetchError } from '@notary/shared/fetch-error';
import { stripHex } from '@notary/shared/hex';
import { Cl, ClarityType, cvToString, hexToCV, serializeCV } from '@stacks/transactions';
import { z } from 'zod';
import { parseRetryAfter, type Transport } from './http.ts';
import {
  fetchProblem,
  TrustError,
  type TrustMessage,
  trustForeign,
  trustMsg,
  trustText,
} from './messages.ts';

/**
 * One reader of the Stacks APIs for the service's Stacks adapter and the verifier's check 4 (the anchorer's
 * nonces, fees and broadcasts are `StacksAnchoringClient`'s, `stacks-anchoring.ts`): `fetch` only (it runs in
 * browsers as in Node), every answer bounded in bytes and time, never following a redirect, and every
 * request inside one request budget per client.
 *
 * Three kinds of endpoint, told apart by what they serve (`detect`):
 * - `hiro-v3`: the Hiro Stacks Blockchain API with its `/extended/v3` routes (hirosystems/stacks-blockchain-api
 *   `src/api/routes/v3/transactions.ts`: `GET /extended/v3/transactions/:tx_id?include=function_args,result`,
 *   schemas `src/api/schemas/v3/entities/transactions.ts` and `mempool-transactions.ts`;
 *   `routes/v3/principals.ts`: `GET /extended/v3/principals/:principal/nonces`, `next_nonce`);
 * - `hiro-v1`: an older Hiro API with only the v1 routes (`GET /extended/v1/tx/0x<txid>`,
 *   `GET /extended/v1/address/:principal/nonces`, `possible_next_nonce`), deprecated and answering
 *   `410 Gone` once the operator disables them (`src/api/deprecation-plugin.ts`);
 * - `node`: a bare stacks-node (stacks-core `docs/rpc/openapi.yaml`): `/v2/*` only, no transaction index.
 * A Hiro API proxies the node's `/v2/*` routes, so `info`, `callReadOnly` and the anchoring client's
 * nonces, fees and broadcasts work on every kind.
 *
 * Detection (`kind: 'auto'`): `GET /extended` answering Hiro's status object (`server_version`, `status`) is a
 * Hiro API; it has v3 when `GET /extended/v3/transactions/0x00…00` answers Hiro's own 404 (a JSON error for
 * that transaction, not fastify's "Route GET:… not found"), else v1 when the same v1 route does; anything
 * else at `/extended` (a stacks-node answers `404 text/plain "No such API endpoint"`) with a JSON `/v2/info`
 * is a node. In `auto` mode a v1 endpoint that answers 410 later is detected again (Hiro's sunset).
 *
 * Unavailability and answers are kept apart: every read resolves with what the endpoint said (including "no
 * such transaction": `null`) or throws `StacksApiUnavailable` (`reason`: unreachable, rate-limited, gone,
 * wrong-kind, not-json, bad-answer, http-error), never anything else.
 *
 * Request budget: a token bucket of `rpm` requests per minute (burst `burst`) shared by every caller of the
 * client; a `429` sets the whole budget aside for its `Retry-After` (seconds or an HTTP date, RFC 9110
 * 10.2.3; at most `MAX_RETRY_AFTER_MS`), after which the request is sent again. A caller waits for the budget at most `maxWaitMs`; one that
 * would wait longer gets `StacksApiUnavailable` with reason `rate-limited` and `retryAfterMs`.
 */

/** The kind of a Stacks API endpoint (see the module comment). */
export type StacksApiKind = 'hiro-v3' | 'hiro-v1' | 'node';
/** A configured kind: one of the kinds, or `auto` (detected). */
export type StacksApiKindSetting = StacksApiKind | 'auto';
export const STACKS_API_KIND_SETTINGS = ['auto', 'hiro-v3', 'hiro-v1', 'node'] as const;

/** Statuses of a mined transaction (Hiro v1 and v3 `TransactionStatusSchema`). */
export const MINED_TX_STATUSES = [
  'success',
  'abort_by_response',
  'abort_by_post_condition',
  'problematic_skipped',
] as const;
/** Statuses of a mempool transaction (Hiro v1 and v3 `MempoolTransactionStatusSchema`). */
export const MEMPOOL_TX_STATUSES = [
  'pending',
  'dropped_replace_by_fee',
  'dropped_replace_across_fork',
  'dropped_too_expensive',
  'dropped_stale_garbage_collect',
  'dropped_problematic',
] as const;
export type StacksTxStatus = (typeof MINED_TX_STATUSES)[number] | (typeof MEMPOOL_TX_STATUSES)[number];

/** Why an endpoint gave no usable answer. */
export type StacksApiFailure =
  | 'unreachable'
  | 'rate-limited'
  | 'gone'
  | 'wrong-kind'
  | 'not-json'
  | 'bad-answer'
  | 'http-error';

/**
 * The endpoint gave no usable answer: unavailability, never evidence about a transaction. `message` names the
 * route (`GET /extended/v3/…`), not the base URL (the caller knows which endpoint it asked, and may hold a key
 * in it); `detail` says the same as data. A caller's own English text is its `detail` as it is.
 */
export class StacksApiUnavailable extends TrustError {
  override name = 'StacksApiUnavailable';
  readonly reason: StacksApiFailure;
  /** The HTTP status, when one was answered. */
  readonly status: number | undefined;
  /** `rate-limited`: how long until the endpoint accepts requests again, ms. */
  readonly retryAfterMs: number | undefined;

  constructor(
    reason: StacksApiFailure,
    detail: TrustMessage | string,
    extra: { status?: number; retryAfterMs?: number } = {},
  ) {
    super(typeof detail === 'string' ? trustForeign(detail) : detail);
    this.reason = reason;
    this.status = extra.status;
    this.retryAfterMs = extra.retryAfterMs;
  }
}

/** The endpoint is not of the kind required (`reason: 'wrong-kind'`); `found` is what it is, when known. */
export class StacksWrongKind extends StacksApiUnavailable {
  override name = 'StacksWrongKind';
  readonly expected: StacksApiKind;
  readonly found: StacksApiKind | 'none';

  constructor(expected: StacksApiKind, found: StacksApiKind | 'none', detail: TrustMessage) {
    super('wrong-kind', detail);
    this.expected = expected;
    this.found = found;
  }
}

/** Time source and sleeper of the request budget: the system clock by default, a fake one in tests. */
export interface StacksApiClock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Resolves after `ms` milliseconds of this clock. */
  sleep(ms: number): Promise<void>;
}

export const systemClock: StacksApiClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** Largest answer read, bytes: a v3 transaction with its arguments and result is a few KB. */
export const STACKS_API_MAX_BYTES = 1024 * 1024;
/** Pause after a 429 that names no `Retry-After`, ms. */
export const DEFAULT_RETRY_AFTER_MS = 30_000;
/** Longest `Retry-After` honoured, ms: a hostile date cannot park a client for days. */
export const MAX_RETRY_AFTER_MS = 10 * 60_000;
/** 429 answers one request accepts (each followed by the endpoint's pause) before it is `rate-limited`. */
const MAX_429_PER_REQUEST = 3;
const ZERO_TXID = `0x${'0'.repeat(64)}`;

/**
 * A request budget (token bucket) shared by every request of one client: `rpm` requests per minute, at most
 * `burst` at once, so any minute sees at most `rpm + burst` requests (default burst `ceil(rpm / 10)`: 44 for
 * the default 40, under Hiro's 50 per minute without a key). Without `rpm` only the pauses of `pause` apply.
 * A slot is reserved when asked for (callers are served in the order they asked).
 */
export class RequestBudget {
  readonly rpm: number | undefined;
  readonly burst: number;
  private readonly clock: StacksApiClock;
  private tokens: number;
  /** The instant `tokens` is counted at (in the future while paused). */
  private countedAt: number;
  private pausedUntil = 0;

  constructor(options: { rpm?: number; burst?: number; clock?: StacksApiClock } = {}) {
    this.rpm = options.rpm !== undefined && options.rpm > 0 ? options.rpm : undefined;
    this.burst = Math.max(1, options.burst ?? Math.ceil((this.rpm ?? 10) / 10));
    this.clock = options.clock ?? systemClock;
    this.tokens = this.burst;
    this.countedAt = this.clock.now();
  }

  /**
   * Waits for a slot. @throws StacksApiUnavailable `rate-limited` (with `retryAfterMs`) when the slot comes
   * later than `maxWaitMs` from now (nothing is reserved then).
   */
  async take(maxWaitMs: number): Promise<void> {
    const now = this.clock.now();
    const deadline = now + maxWaitMs;
    const readyAt = this.reserve(now);
    if (readyAt > deadline) {
      if (this.rpm !== undefined) this.tokens += 1;
      throw rateLimited(readyAt - now, 'trust.budgetWait');
    }
    let at = readyAt;
    while (at > this.clock.now()) {
      await this.clock.sleep(at - this.clock.now());
      // A 429 answered meanwhile pauses those who reserved before it too.
      at = Math.max(at, this.pausedUntil);
      if (at > deadline) throw rateLimited(at - this.clock.now(), 'trust.endpointWait');
    }
  }

  /** Sets every caller aside until `ms` from now (an endpoint's `429` with `Retry-After`). */
  pause(ms: number): void {
    const until = this.clock.now() + ms;
    if (until <= this.pausedUntil) return;
    this.pausedUntil = until;
    if (this.rpm !== undefined) {
      this.refill(this.clock.now());
      // Nothing accrues while paused; the first caller after it goes at once, the next at the budget's pace.
      this.tokens = Math.min(this.tokens, 1);
      this.countedAt = Math.max(this.countedAt, until);
    }
  }

  private reserve(now: number): number {
    if (this.rpm === undefined) return Math.max(now, this.pausedUntil);
    this.refill(now);
    this.tokens -= 1;
    const perMs = this.rpm / 60_000;
    const ready = this.tokens >= 0 ? this.countedAt : this.countedAt + -this.tokens / perMs;
    return Math.max(now, ready, this.pausedUntil);
  }

  private refill(now: number): void {
    if (this.rpm === undefined || now <= this.countedAt) return;
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.countedAt) * this.rpm) / 60_000);
    this.countedAt = now;
  }
}

function rateLimited(ms: number, who: 'trust.budgetWait' | 'trust.endpointWait'): StacksApiUnavailable {
  return new StacksApiUnavailable('rate-limited', trustMsg(who, { seconds: Math.ceil(ms / 1000) }), {
    status: 429,
    retryAfterMs: ms,
  });
}

export interface StacksApiOptions {
  /** Base URL, e.g. `https://api.testnet.hiro.so` or `http://127.0.0.1:20443` (no credentials: see `headers`). */
  url: string;
  /** The kind, or `auto` (default): detected at the first read. */
  kind?: StacksApiKindSetting;
  /** Sent as `x-api-key` on every request (Hiro's API keys). */
  apiKey?: string;
  /** Other headers on every request (e.g. `authorization` for a URL's credentials). */
  headers?: Readonly<Record<string, string>>;
  /** Fetch and timeout of one request. Default `globalThis.fetch`, 10 s. */
  transport?: Transport;
  /** Request budget, requests per minute; unset: no budget (429s still pause the client). */
  rpm?: number;
  /** Budget burst (default `ceil(rpm / 10)`). */
  burst?: number;
  /** Longest a request waits for the budget or a 429's pause, ms. Default 30 s. */
  maxWaitMs?: number;
  /** Largest answer read, bytes (default `STACKS_API_MAX_BYTES`). */
  maxBytes?: number;
  clock?: StacksApiClock;
}

/** `GET /v2/info`, the fields read (stacks-core `node-info.schema.yaml`). */
export interface StacksNodeInfo {
  networkId: number;
  stacksTipHeight: number;
  burnBlockHeight: number;
  serverVersion: string;
}

/** `GET /extended` (Hiro's API status): its version and the chain tip it has indexed, if any. */
export interface HiroStatus {
  serverVersion: string;
  /** The highest Stacks block the indexer has, null before its first. */
  tipHeight: number | null;
}

/** A transaction as an indexer (Hiro v3 or v1) answers it, normalized. */
export interface StacksTx {
  /** `0x` + 64 lowercase hex. */
  txid: string;
  status: StacksTxStatus;
  /** True only for a transaction mined in a block of the canonical chain (v1's `canonical` and `microblock_canonical`). */
  canonical: boolean;
  /** The block of a mined transaction, else null. */
  blockHeight: number | null;
  /** The Clarity result (`0x` hex) of a mined transaction, null when not answered. */
  resultHex: string | null;
  resultRepr: string | null;
  sender: string | null;
  nonce: number | null;
  /** The call of a `contract_call` transaction; `args` null when the endpoint left them out. */
  contractCall: { contractId: string; functionName: string; args: string[] | null } | null;
  /** `dropped_replace_*`: the transaction that replaced it (`0x…`), when named. */
  replacedBy: string | null;
}

/** A read-only call's answer (stacks-core `read-only-function-result.schema.yaml`). */
export type ReadOnlyResult = { okay: true; result: string } | { okay: false; cause: string };

/** One answer of an endpoint: its status, its body as text (within `maxBytes`) and its content type. */
export interface RawAnswer {
  status: number;
  text: string;
  contentType: string;
}

const Int = z.number().int();
const HiroStatusSchema = z.object({
  server_version: z.string(),
  status: z.string(),
  chain_tip: z.object({ block_height: Int }).nullable().optional(),
});
const NodeInfoSchema = z.object({
  network_id: Int,
  stacks_tip_height: Int,
  burn_block_height: Int,
  server_version: z.string(),
});
const DecodedCV = z.object({ hex: z.string(), repr: z.string().optional() });
const ContractCall = z.object({
  contract_id: z.string(),
  function_name: z.string(),
  function_args: z.array(DecodedCV).optional(),
});
const StatusSchema = z.enum([...MINED_TX_STATUSES, ...MEMPOOL_TX_STATUSES]);
/** Hiro v3 `TransactionSchema` | `MempoolTransactionSchema`, the fields read. */
const V3TxSchema = z.object({
  tx_id: z.string(),
  status: StatusSchema,
  sender: z.object({ address: z.string(), nonce: Int }),
  block: z.object({ height: Int }).optional(),
  result: DecodedCV.optional(),
  contract_call: ContractCall.optional(),
  replaced_by_tx_id: z.string().nullable().optional(),
});
/** Hiro v1 `TransactionSchema` | `MempoolTransactionSchema`, the fields read. */
const V1TxSchema = z.object({
  tx_id: z.string(),
  tx_status: StatusSchema,
  sender_address: z.string(),
  nonce: Int.optional(),
  block_height: Int.optional(),
  canonical: z.boolean().optional(),
  microblock_canonical: z.boolean().optional(),
  tx_result: DecodedCV.optional(),
  contract_call: ContractCall.optional(),
  replaced_by_tx_id: z.string().nullable().optional(),
});
const ReadOnlySchema = z.union([
  z.object({ okay: z.literal(true), result: z.string() }),
  z.object({ okay: z.literal(false), cause: z.string() }),
]);

/** The Stacks API client (see the module comment). One per endpoint; its budget is shared by its callers. */
export class StacksApiClient {
  readonly url: string;
  readonly setting: StacksApiKindSetting;
  readonly budget: RequestBudget;
  private readonly transport: Transport;
  private readonly headers: Record<string, string>;
  private readonly maxWaitMs: number;
  private readonly maxBytes: number;
  private readonly clock: StacksApiClock;
  private detected: Promise<StacksApiKind> | undefined;

  constructor(options: StacksApiOptions) {
    this.url = options.url.replace(/\/+$/, '');
    this.setting = options.kind ?? 'auto';
    this.clock = options.clock ?? systemClock;
    this.budget = new RequestBudget({ rpm: options.rpm, burst: options.burst, clock: this.clock });
    this.transport = options.transport ?? {
      fetch: globalThis.fetch.bind(globalThis),
      timeoutMs: 10_000,
    };
    this.headers = {
      accept: 'application/json',
      ...options.headers,
      ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}),
    };
    this.maxWaitMs = options.maxWaitMs ?? 30_000;
    this.maxBytes = options.maxBytes ?? STACKS_API_MAX_BYTES;
  }

  /**
   * The kind reads use: the configured one, or (`auto`) the detected one, detected once (again after a
   * failed detection, and after a v1 endpoint answered 410).
   */
  kind(): Promise<StacksApiKind> {
    if (this.setting !== 'auto') return Promise.resolve(this.setting);
    this.detected ??= this.detect().catch((e: unknown) => {
      this.detected = undefined;
      throw e;
    });
    return this.detected;
  }

  /**
   * What the endpoint is (module comment, Detection), from its answers alone.
   * @throws StacksWrongKind (`found: 'none'`) when it is neither a Hiro API nor a node; StacksApiUnavailable
   *   `gone` when it is a Hiro API whose v1 routes are disabled and that has no v3 routes; other unavailability.
   */
  async detect(): Promise<StacksApiKind> {
    const status = await this.raw('GET', '/extended');
    if (status.status === 200 && HiroStatusSchema.safeParse(parseJson(status.text)).success) {
      if ((await this.serves('/extended/v3/transactions/')) === 'yes') return 'hiro-v3';
      const v1 = await this.serves('/extended/v1/tx/');
      if (v1 === 'yes') return 'hiro-v1';
      if (v1 === 'gone') throw v1Gone(trustMsg('trust.v1GoneNoV3'));
      throw new StacksWrongKind('hiro-v3', 'none', trustMsg('trust.hiroWithoutTxRoutes'));
    }
    const info = await this.raw('GET', '/v2/info');
    if (info.status === 200 && NodeInfoSchema.safeParse(parseJson(info.text)).success) return 'node';
    throw new StacksWrongKind(
      'node',
      'none',
      trustMsg('trust.neitherKind', { extended: status.status, info: info.status }),
    );
  }

  /**
   * Checks the endpoint against the configured kind (`auto`: detects it) and returns the kind. A Hiro API
   * passes for `node` (it proxies the node's routes).
   * @throws StacksWrongKind naming what the endpoint is instead; StacksApiUnavailable `gone` for `hiro-v1`
   *   when its v1 routes answer 410; other unavailability.
   */
  async probe(): Promise<StacksApiKind> {
    if (this.setting === 'auto') return this.kind();
    const expected = this.setting;
    let found: StacksApiKind;
    try {
      found = await this.detect();
    } catch (e) {
      if (e instanceof StacksWrongKind) throw new StacksWrongKind(expected, e.found, e.detail);
      throw e;
    }
    if (found === expected || expected === 'node') return expected;
    if (expected === 'hiro-v1' && found === 'hiro-v3') {
      // A v3 API may still serve the deprecated v1 routes, until its operator disables them.
      const v1 = await this.serves('/extended/v1/tx/');
      if (v1 === 'yes') return expected;
      if (v1 === 'gone') throw v1Gone(trustMsg('trust.v1GoneV3Answers'));
    }
    throw new StacksWrongKind(expected, found, stacksApiKindMessage(found));
  }

  /** `GET /v2/info`. */
  async info(): Promise<StacksNodeInfo> {
    const body = await this.json('GET', '/v2/info', NodeInfoSchema);
    return {
      networkId: body.network_id,
      stacksTipHeight: body.stacks_tip_height,
      burnBlockHeight: body.burn_block_height,
      serverVersion: body.server_version,
    };
  }

  /** `GET /extended` of a Hiro API: its version and indexed tip. @throws StacksWrongKind on a node. */
  async hiroStatus(): Promise<HiroStatus> {
    const res = await this.raw('GET', '/extended');
    const parsed = HiroStatusSchema.safeParse(parseJson(res.text));
    if (res.status !== 200 || !parsed.success) {
      throw new StacksWrongKind(
        'hiro-v3',
        'none',
        at('GET /extended', trustMsg('trust.notHiroStatus', { status: res.status })),
      );
    }
    return {
      serverVersion: parsed.data.server_version,
      tipHeight: parsed.data.chain_tip?.block_height ?? null,
    };
  }

  /**
   * The transaction `txid` as the indexer knows it (mined or in its mempool table), `null` when it knows none.
   * v3: `GET /extended/v3/transactions/0x<txid>?include=function_args,result`; v1: `GET /extended/v1/tx/0x<txid>`.
   * @throws StacksWrongKind on a node (no transaction index); StacksApiUnavailable otherwise.
   */
  async transaction(txid: string): Promise<StacksTx | null> {
    return this.indexed(async (kind) => {
      const id = `0x${stripHex(txid)}`;
      if (kind === 'hiro-v3') {
        const res = await this.raw('GET', `/extended/v3/transactions/${id}?include=function_args,result`);
        if (res.status === 404) return this.notFound(res, 'GET /extended/v3/transactions');
        return fromV3(this.decode(res, 'GET /extended/v3/transactions', V3TxSchema));
      }
      const res = await this.raw('GET', `/extended/v1/tx/${id}`);
      if (res.status === 404) return this.notFound(res, 'GET /extended/v1/tx');
      return fromV1(this.decode(res, 'GET /extended/v1/tx', V1TxSchema));
    });
  }

  /**
   * `POST /v2/contracts/call-read/<address>/<name>/<fn>` with `{ sender, arguments }` (hex Clarity values,
   * `0x`-prefixed); the node requires `sender`.
   */
  async callReadOnly(
    contractId: string,
    functionName: string,
    args: readonly string[],
    sender: string,
  ): Promise<ReadOnlyResult> {
    const [address, name] = contractId.split('.');
    return this.json(
      'POST',
      `/v2/contracts/call-read/${address}/${name}/${functionName}`,
      ReadOnlySchema,
      JSON.stringify({ sender, arguments: args }),
    );
  }

  /** Runs an indexer read; in `auto` mode a v1 endpoint that is gone is detected again once. */
  protected async indexed<T>(read: (kind: 'hiro-v3' | 'hiro-v1') => Promise<T>): Promise<T> {
    const kind = await this.kind();
    if (kind === 'node') {
      throw new StacksWrongKind('hiro-v3', 'node', trustMsg('trust.nodeNoIndex'));
    }
    try {
      return await read(kind);
    } catch (e) {
      if (!(kind === 'hiro-v1' && this.setting === 'auto' && e instanceof StacksApiUnavailable)) throw e;
      if (e.reason !== 'gone') throw e;
      this.detected = undefined;
      const again = await this.kind();
      if (again === 'node' || again === 'hiro-v1') throw e;
      return read(again);
    }
  }

  /** Does the Hiro API serve `prefix` (Hiro's own 404 for the zero txid, or an answer), or is it gone (410)? */
  private async serves(prefix: string): Promise<'yes' | 'no' | 'gone'> {
    let res: RawAnswer;
    try {
      res = await this.raw('GET', `${prefix}${ZERO_TXID}`);
    } catch (e) {
      if (e instanceof StacksApiUnavailable && e.reason === 'gone') return 'gone';
      throw e;
    }
    if (res.status === 200 || (res.status === 404 && !isRoute404(res))) return 'yes';
    return 'no';
  }

  private notFound(res: RawAnswer, what: string): null {
    if (isRoute404(res)) {
      throw new StacksWrongKind('hiro-v3', 'none', at(what, trustMsg('trust.noSuchRoute')));
    }
    return null;
  }

  protected async json<S extends z.ZodType>(
    method: 'GET' | 'POST',
    path: string,
    schema: S,
    body?: string,
  ): Promise<z.infer<S>> {
    const res = await this.raw(method, path, body);
    const what = `${method} ${routeOf(path)}`;
    if (res.status !== 200) throw httpError(what, res);
    return this.decode(res, what, schema);
  }

  private decode<S extends z.ZodType>(res: RawAnswer, what: string, schema: S): z.infer<S> {
    if (res.status !== 200) throw httpError(what, res);
    const value = parseJson(res.text);
    if (value === undefined) {
      throw new StacksApiUnavailable(
        'not-json',
        at(what, trustMsg('trust.httpNotJson', { status: res.status, answer: snippet(res.text) })),
        { status: res.status },
      );
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw badAnswer(what, res, parsed.error.issues[0]?.path.join('.'));
    return parsed.data;
  }

  /**
   * One request under the budget: 429 pauses the budget for its `Retry-After` and sends again (at most
   * `MAX_429_PER_REQUEST` times, within `maxWaitMs`); 410 is `gone`; the answer is read up to `maxBytes`.
   */
  protected async raw(method: 'GET' | 'POST', path: string, body?: string | Uint8Array): Promise<RawAnswer> {
    const what = `${method} ${routeOf(path)}`;
    const deadline = this.clock.now() + this.maxWaitMs;
    const headers: Record<string, string> = { ...this.headers };
    if (typeof body === 'string') headers['content-type'] = 'application/json';
    else if (body) headers['content-type'] = 'application/octet-stream';
    for (let answered429 = 0; ; ) {
      await this.budget.take(Math.max(0, deadline - this.clock.now()));
      let res: Response;
      try {
        res = await this.transport.fetch(`${this.url}${path}`, {
          method,
          headers,
          ...(body === undefined ? {} : { body: typeof body === 'string' ? body : new Uint8Array(body) }),
          redirect: 'error',
          signal: AbortSignal.timeout(this.transport.timeoutMs),
        });
      } catch (e) {
        throw new StacksApiUnavailable(
          'unreachable',
          at(what, trustMsg('trust.unreachable', { problem: fetchProblem(e) })),
        );
      }
      if (res.type === 'opaqueredirect' || (res.status >= 300 && res.status < 400)) {
        await res.body?.cancel().catch(() => undefined);
        throw new StacksApiUnavailable(
          'http-error',
          at(what, trustMsg('trust.httpRedirectGiveFinal', { status: res.status })),
          { status: res.status },
        );
      }
      if (res.status === 429) {
        await res.body?.cancel().catch(() => undefined);
        const ms = Math.min(
          parseRetryAfter(res.headers.get('retry-after'), this.clock.now()) ?? DEFAULT_RETRY_AFTER_MS,
          MAX_RETRY_AFTER_MS,
        );
        this.budget.pause(ms);
        answered429 += 1;
        if (answered429 >= MAX_429_PER_REQUEST || this.clock.now() + ms > deadline) {
          throw new StacksApiUnavailable(
            'rate-limited',
            at(what, trustMsg('trust.http429', { seconds: Math.ceil(ms / 1000) })),
            { status: 429, retryAfterMs: ms },
          );
        }
        continue;
      }
      let text: string;
      try {
        text = new TextDecoder().decode(await readBounded(res, this.maxBytes));
      } catch (e) {
        throw new StacksApiUnavailable(
          'unreachable',
          at(what, trustMsg('trust.httpThen', { status: res.status, problem: fetchProblem(e) })),
          { status: res.status },
        );
      }
      if (res.status === 410) {
        throw new StacksApiUnavailable(
          'gone',
          at(what, trustMsg('trust.http410', { answer: snippet(goneMessage(text)) })),
          { status: 410 },
        );
      }
      return { status: res.status, text, contentType: res.headers.get('content-type') ?? '' };
    }
  }
}

function fromV3(b: z.infer<typeof V3TxSchema>): StacksTx {
  const mined = b.block !== undefined && isMined(b.status);
  return {
    txid: `0x${stripHex(b.tx_id)}`,
    status: b.status,
    // v3 answers mined transactions of the canonical chain only (a forked one is back in its mempool table).
    canonical: mined,
    blockHeight: mined ? (b.block?.height ?? null) : null,
    resultHex: b.result?.hex.toLowerCase() ?? null,
    resultRepr: b.result?.repr ?? null,
    sender: b.sender.address,
    nonce: b.sender.nonce,
    contractCall: contractCallOf(b.contract_call),
    replacedBy: b.replaced_by_tx_id ? `0x${stripHex(b.replaced_by_tx_id)}` : null,
  };
}

function fromV1(b: z.infer<typeof V1TxSchema>): StacksTx {
  const mined = isMined(b.tx_status) && b.block_height !== undefined;
  return {
    txid: `0x${stripHex(b.tx_id)}`,
    status: b.tx_status,
    canonical: mined && b.canonical === true && b.microblock_canonical !== false,
    blockHeight: mined ? (b.block_height ?? null) : null,
    resultHex: b.tx_result?.hex.toLowerCase() ?? null,
    resultRepr: b.tx_result?.repr ?? null,
    sender: b.sender_address,
    nonce: b.nonce ?? null,
    contractCall: contractCallOf(b.contract_call),
    replacedBy: b.replaced_by_tx_id ? `0x${stripHex(b.replaced_by_tx_id)}` : null,
  };
}

function contractCallOf(c: z.infer<typeof ContractCall> | undefined): StacksTx['contractCall'] {
  if (!c) return null;
  return {
    contractId: c.contract_id,
    functionName: c.function_name,
    args: c.function_args ? c.function_args.map((a) => a.hex.toLowerCase()) : null,
  };
}

/** True for a mined transaction's status (`MINED_TX_STATUSES`). */
export function isMined(status: StacksTxStatus): boolean {
  return (MINED_TX_STATUSES as readonly string[]).includes(status);
}

/**
 * A 404 that says the route does not exist (not "no such transaction"): a text body (a stacks-node's
 * "No such API endpoint", a proxy's page) or fastify's default `Route GET:<path> not found`.
 */
function isRoute404(res: RawAnswer): boolean {
  const body = parseJson(res.text) as { message?: unknown; error?: unknown } | undefined;
  if (body === undefined || typeof body !== 'object' || body === null) return true;
  const text = `${typeof body.message === 'string' ? body.message : ''} ${typeof body.error === 'string' ? body.error : ''}`;
  return /Route (GET|POST):\S* not found|No such API endpoint|no route/i.test(text);
}

/** The JSON value of `text`, or undefined when it is not JSON. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function goneMessage(text: string): string {
  const body = parseJson(text) as { message?: unknown } | undefined;
  return body && typeof body.message === 'string' ? body.message : text;
}

/** `http-error`: `what` answered an HTTP status it should not have. */
export function httpError(what: string, res: RawAnswer): StacksApiUnavailable {
  return new StacksApiUnavailable(
    'http-error',
    at(what, trustMsg('trust.httpAnswer', { status: res.status, answer: snippet(res.text) })),
    { status: res.status },
  );
}

/** `bad-answer`: `what` answered 200 with a body that is not the expected answer (`field`: where). */
export function badAnswer(what: string, res: RawAnswer, field?: string): StacksApiUnavailable {
  const answer = snippet(res.text);
  return new StacksApiUnavailable(
    'bad-answer',
    at(
      what,
      field
        ? trustMsg('trust.httpUnexpectedAt', { status: res.status, field, answer })
        : trustMsg('trust.httpUnexpected', { status: res.status, answer }),
    ),
    { status: res.status },
  );
}

/** `problem` of the request `route` (`GET /v2/info`): `GET /v2/info: problem`. */
function at(route: string, problem: TrustMessage): TrustMessage {
  return trustMsg('trust.at', { route, problem });
}

function v1Gone(detail: TrustMessage): StacksApiUnavailable {
  return new StacksApiUnavailable('gone', detail, { status: 410 });
}

/**
 * What an endpoint of `kind` is, for messages: `a Hiro API with /extended/v3 routes (hiro-v3)`, `a Hiro API
 * with only the deprecated /extended/v1 routes (hiro-v1)` or `a stacks-node without a Hiro API (node)`.
 */
export function describeStacksApiKind(kind: StacksApiKind): string {
  return trustText(stacksApiKindMessage(kind));
}

/** What an endpoint of `kind` is, as a trust message (`describeStacksApiKind`'s English). */
export function stacksApiKindMessage(kind: StacksApiKind): TrustMessage {
  switch (kind) {
    case 'hiro-v3':
      return trustMsg('trust.kindHiroV3');
    case 'hiro-v1':
      return trustMsg('trust.kindHiroV1');
    default:
      return trustMsg('trust.kindNode');
  }
}

/** The route of `path` for messages: the query left out (it may carry nothing secret, but is noise). */
function routeOf(path: string): string {
  return path.split('?')[0] ?? path;
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 160 ? `${flat.slice(0, 160)}…` : flat;
}

/** `{ height, sender }` of `(get-anchor root)`: the first record of a root in the notary contract. */
export interface AnchorRecord {
  height: number;
  sender: string;
}

/** `(buff 32)` of a root given as hex (with or without `0x`), serialized for `arguments` (`0x…`). */
export function rootArgument(rootHex: string): string {
  return `0x${serializeCV(Cl.bufferFromHex(stripHex(rootHex)))}`;
}

/**
 * Reads `(get-anchor root)` of the notary contract `contractId` (`server/contracts/notary.clar`): its record,
 * or null when the root has none.
 * @throws StacksApiUnavailable (`bad-answer` for a failed call or a value that is not `(optional { height: uint,
 *   sender: principal })`).
 */
export async function readAnchor(
  api: StacksApiClient,
  contractId: string,
  rootHex: string,
  sender: string,
): Promise<AnchorRecord | null> {
  const answer = await api.callReadOnly(contractId, 'get-anchor', [rootArgument(rootHex)], sender);
  if (!answer.okay) {
    throw new StacksApiUnavailable(
      'bad-answer',
      trustMsg('trust.getAnchorFailed', { answer: snippet(answer.cause) }),
    );
  }
  let cv: ReturnType<typeof hexToCV>;
  try {
    cv = hexToCV(answer.result);
  } catch (e) {
    throw new StacksApiUnavailable(
      'bad-answer',
      trustMsg('trust.getAnchorUndecodable', { error: describeFetchError(e) }),
    );
  }
  if (cv.type === ClarityType.OptionalNone) return null;
  if (cv.type === ClarityType.OptionalSome && cv.value.type === ClarityType.Tuple) {
    const { height, sender: who } = cv.value.value;
    if (height?.type === ClarityType.UInt && who?.type === ClarityType.PrincipalStandard) {
      return { height: Number(height.value), sender: who.value };
    }
  }
  throw new StacksApiUnavailable(
    'bad-answer',
    trustMsg('trust.getAnchorUnexpected', { value: cvToString(cv) }),
  );
}

/**
 * The root an `anchor` call recorded, from its result `(ok { root: (buff 32), height, new })` (hex, `0x`), or
 * null when the result is not that.
 */
export function anchoredRootOfResult(resultHex: string): string | null {
  try {
    const cv = hexToCV(resultHex);
    if (cv.type !== ClarityType.ResponseOk || cv.value.type !== ClarityType.Tuple) return null;
    const root = cv.value.value.root;
    return root?.type === ClarityType.Buffer ? `0x${root.value.toLowerCase()}` : null;
  } catch {
    return null;
  }
}
