/**
 * Backing off a chain provider that rate-limits us. Hosted RPC providers answer a burst with HTTP 429 Too Many
 * Requests (RFC 6585 §4), often with `Retry-After` (RFC 9110 §10.2.3: seconds, or an HTTP date), some with a
 * JSON-RPC error instead (EIP-1474 code -32005 "limit exceeded"; Infura adds `data.backoff_seconds`; Alchemy
 * code 429). Retrying at once makes it worse and, with a metered key, costs money: after such an answer every
 * call to that endpoint is refused locally until the wait is over (`RateLimitGate`), so the pipeline never
 * loops on a limited provider.
 */

export interface RateLimitGateOptions {
  /** The clock, in milliseconds (default `Date.now`); tests move it instead of sleeping. */
  now?: () => number;
  /** The wait after a first limit without a usable hint, in ms (default 1,000); doubles per limit in a row. */
  firstBackoffMs?: number;
  /** The longest wait without a hint, in ms (default 60,000). */
  maxBackoffMs?: number;
  /** A provider's hint is honoured up to this, in ms (default 600,000): a hostile date cannot park us for days. */
  maxRetryAfterMs?: number;
}

/** The JSON-RPC error fields a rate limit is recognized by. */
export interface RpcErrorLike {
  code?: unknown;
  message?: unknown;
  data?: unknown;
}

const RATE_LIMIT_WORDING =
  /rate.?limit|too many requests|limit exceeded|exceeded .*(?:capacity|limit|quota|compute units)|request rate|throttl/i;

/**
 * True when a JSON-RPC error is a provider's rate limit rather than a verdict on the request: code -32005
 * (EIP-1474 "limit exceeded", Infura), code 429 (Alchemy), or a message saying so.
 */
export function isRateLimitRpcError(error: RpcErrorLike | undefined): boolean {
  if (!error) return false;
  if (error.code === -32005 || error.code === 429) return true;
  return typeof error.message === 'string' && RATE_LIMIT_WORDING.test(error.message);
}

/** Infura's hint in a rate-limit error (`data.backoff_seconds`), in ms; `undefined` without one. */
export function rpcBackoffHint(error: RpcErrorLike | undefined): number | undefined {
  const data = error?.data;
  if (typeof data !== 'object' || data === null) return undefined;
  const seconds = (data as { backoff_seconds?: unknown }).backoff_seconds;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 0
    ? Math.ceil(seconds * 1000)
    : undefined;
}

/**
 * One endpoint's rate-limit state. `limited(hint)` records a limit and closes the gate for the hinted wait
 * (capped at `maxRetryAfterMs`) or, without a hint, for `firstBackoffMs` doubling per limit in a row (capped at
 * `maxBackoffMs`); `waitMs()` is how long it stays closed (0 when open); `succeeded()` ends the streak.
 */
export class RateLimitGate {
  /** The gate's clock, in milliseconds (`RateLimitGateOptions.now`). */
  readonly now: () => number;
  private readonly firstBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly maxRetryAfterMs: number;
  private openAt = 0;
  private streak = 0;
  /** Limits recorded so far: a caller compares it before and after a call to know whether it was limited. */
  limits = 0;

  constructor(options: RateLimitGateOptions = {}) {
    this.now = options.now ?? Date.now;
    this.firstBackoffMs = options.firstBackoffMs ?? 1_000;
    this.maxBackoffMs = options.maxBackoffMs ?? 60_000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 600_000;
  }

  /** Milliseconds until calls may go out again; 0 when they may now. */
  waitMs(): number {
    return Math.max(0, this.openAt - this.now());
  }

  /**
   * Records a rate-limit answer. `hintMs`: the provider's own wait (from `parseRetryAfter` or
   * `rpcBackoffHint`), undefined when it gave none. Returns the wait applied, in ms.
   */
  limited(hintMs: number | undefined): number {
    this.limits += 1;
    this.streak += 1;
    const wait =
      hintMs === undefined
        ? Math.min(this.firstBackoffMs * 2 ** Math.min(this.streak - 1, 30), this.maxBackoffMs)
        : Math.min(Math.max(0, hintMs), this.maxRetryAfterMs);
    this.openAt = Math.max(this.openAt, this.now() + wait);
    return wait;
  }

  /** A call went through: the next limit starts a new backoff streak. */
  succeeded(): void {
    this.streak = 0;
  }
}
