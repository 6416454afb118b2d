/**
 * The Stacks devnet's switches (`StacksDevnetSwitches`): the situations a client meets on real networks, set at
 * start and through `configure` at run time. A bare node, an indexer that lags behind the node, Hiro's gateway
 * limits (429), disabled v1 routes (410), and a transaction orphaned by a fork as the indexer then sees it.
 */

import { normalizeTxid } from './stacks-chain';
import { type Answer, json } from './stacks-http';
import type { StacksDevnetState, TxRecord } from './stacks-state';

/**
 * How Hiro's gateway limits requests (docs.hiro.so "Rate limits", "Response headers": about 50 a minute per IP
 * without a key; a 429 carries `retry-after` in seconds). `next`: the next N requests answer 429 (deterministic,
 * for tests); `limit`/`windowMs`: every request over `limit` in a fixed window answers 429 until it ends.
 */
export type StacksDevnetRateLimit =
  | { next: number; retryAfterSeconds?: number }
  | { limit: number; windowMs: number };

/** The devnet's run-time switches (`configure`); each defaults to the plain, forgiving behaviour. */
export interface StacksDevnetSwitches {
  /**
   * What `url` is: `hiro` (default: node RPC and Hiro's `/extended` routes on one address, as api.hiro.so) or
   * `node` (a bare stacks-node: `/extended` answers its text/plain 404). `indexerUrl` is a Hiro API either way.
   */
  kind: 'hiro' | 'node';
  /**
   * Hiro's deprecated v1 routes answer `410 Gone` `{ error: 'Gone', message: 'This endpoint has been disabled. …' }`,
   * as with the operator's `ENABLE_DEPRECATED_ENDPOINTS=false` (`src/api/deprecation-plugin.ts`).
   */
  v1Gone: boolean;
  /** The indexer sees blocks this many blocks after the node (its chain tip, mined transactions, nonces). */
  indexerLagBlocks: number;
  /** Hiro's gateway limit on the Hiro API answers (`url` when `kind` is `hiro`, and `indexerUrl`); null: none. */
  rateLimit: StacksDevnetRateLimit | null;
  /**
   * With a schema validator loaded (tests): an answer that breaks the pinned schemas is replaced by HTTP 500
   * (text/plain, the violations) when true (default), or sent as is when false; it is recorded either way.
   */
  strict: boolean;
}

/** Hiro's gateway limiter: the 429 answer when a request at `now` (ms since the epoch) is over the limit. */
export type Limiter = (now: number) => Answer | undefined;

/** The switches at start: the forgiving defaults, overridden by `given`. */
export function initialSwitches(given: Partial<StacksDevnetSwitches> = {}): StacksDevnetSwitches {
  return { kind: 'hiro', v1Gone: false, indexerLagBlocks: 0, rateLimit: null, strict: true, ...given };
}

/** `configure`: changes the switches in place (a new limiter when `rateLimit` is given); returns them all. */
export function configureSwitches(
  state: StacksDevnetState,
  next: Partial<StacksDevnetSwitches>,
): StacksDevnetSwitches {
  Object.assign(state.switches, next);
  if ('rateLimit' in next) state.limiter = newLimiter(state.switches.rateLimit);
  return { ...state.switches };
}

/**
 * `markNonCanonical`: the indexer's view of a mined transaction after a fork orphaned its block (`restored`:
 * put back in its mempool, as Hiro does on a reorg). @throws Error when the transaction is not mined here.
 */
export function markNonCanonical(
  state: StacksDevnetState,
  txid: string,
  options: { restored?: boolean } = {},
): void {
  const rec = state.txs.get(normalizeTxid(txid));
  if (!rec || rec.blockHeight === undefined) {
    throw new Error(`markNonCanonical: ${txid} is not a mined transaction of this devnet`);
  }
  rec.orphaned = options.restored ? 'restored' : 'orphaned';
}

/** The indexer's chain tip: the node's, `indexerLagBlocks` behind. */
export function indexerTip(state: StacksDevnetState): number {
  return Math.max(0, state.simnet.stacksBlockHeight - Math.max(0, state.switches.indexerLagBlocks));
}

/** How the indexer sees a transaction: mined (canonical or not), in its mempool, dropped, or not at all. */
export function indexerView(
  state: StacksDevnetState,
  r: TxRecord,
): 'mined' | 'orphaned' | 'pending' | 'dropped' {
  if (r.status === 'dropped_replace_by_fee') return 'dropped';
  if (r.blockHeight === undefined || r.blockHeight > indexerTip(state)) return 'pending';
  if (r.orphaned === 'orphaned') return 'orphaned';
  if (r.orphaned === 'restored') return 'pending';
  return 'mined';
}

/** A fixed-window or next-N limiter; returns the 429 answer when the request is over the limit. */
export function newLimiter(limit: StacksDevnetRateLimit | null): Limiter {
  if (!limit) return () => undefined;
  const tooMany = (retryAfter: number, extra: Record<string, string> = {}) =>
    json(
      429,
      { error: 'Too Many Requests', message: `API rate limit exceeded; retry after ${retryAfter} s` },
      { 'retry-after': String(retryAfter), ...extra },
    );
  if ('next' in limit) {
    let left = Math.max(0, Math.floor(limit.next));
    const retryAfter = Math.max(0, Math.floor(limit.retryAfterSeconds ?? 1));
    return () => {
      if (left <= 0) return undefined;
      left -= 1;
      return tooMany(retryAfter);
    };
  }
  let windowStart = -1;
  let used = 0;
  return (now) => {
    if (windowStart < 0 || now - windowStart >= limit.windowMs) {
      windowStart = now;
      used = 0;
    }
    used += 1;
    const reset = windowStart + limit.windowMs;
    const headers = {
      'ratelimit-limit': String(limit.limit),
      'ratelimit-remaining': String(Math.max(0, limit.limit - used)),
      'ratelimit-reset': String(Math.ceil(reset / 1000)),
    };
    if (used <= limit.limit) return undefined;
    return tooMany(Math.max(1, Math.ceil((reset - now) / 1000)), headers);
  };
}
