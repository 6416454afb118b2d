import type { Log } from '@notary/platform/log';
import { RATE_LIMIT_WINDOW_SECONDS, RATE_LIMITS, type RateLimitName } from '@notary/shared';
import { ipKeyGenerator, MemoryStore, type Options, type Store } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import type { RateLimitCaller, RateLimitDecision, RateLimiter } from '../../ports/rate-limit';
import type { RedisConnection } from '../redis/client';

/** The subject of a call: `user:<id>` with a valid session token, else `ip:<address or IPv6 /56>`. */
export function rateLimitSubject(userId: string | null, ip: string | null): string {
  return userId ? `user:${userId}` : `ip:${ipKeyGenerator(ip ?? 'unknown')}`;
}

const ALLOWED: RateLimitDecision = {
  allowed: true,
  exceeded: undefined,
  retryAfterSeconds: 0,
  headers: undefined,
};

/**
 * A limiter over an express-rate-limit `Store` (its `MemoryStore`, or rate-limit-redis's `RedisStore`), so the
 * counting itself is the library's: one fixed 60 s window per key `<limit>:<subject>`. When the store fails
 * (Redis down) the call is counted by `options.fallback` when given (this instance's own counters), else allowed;
 * `onStoreError` hears of every failure, `onStoreBack` of the first success after one.
 */
export function storeRateLimiter(
  store: Store,
  kind: 'memory' | 'redis',
  options: {
    onStoreError: (e: unknown) => void;
    onStoreBack?: () => void;
    fallback?: RateLimiter;
  },
): RateLimiter {
  let failing = false;
  // Both stores read only `windowMs` of the middleware's options.
  const storeOptions: Pick<Options, 'windowMs'> = { windowMs: RATE_LIMIT_WINDOW_SECONDS * 1000 };
  const ready = Promise.resolve(store.init?.(storeOptions as Options)).catch(options.onStoreError);
  // MemoryStore hands back its live counter object, so two calls in flight would both read the later count:
  // in process, calls are counted one after the other. Redis answers each call with its own count.
  let turn: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => {
    if (kind !== 'memory') return work();
    const result = turn.then(work);
    turn = result.catch(() => undefined);
    return result;
  };
  return {
    enabled: true,
    kind,
    consume: (limits, caller) => inTurn(() => count(limits, caller)),
  };

  async function count(
    limits: readonly RateLimitName[],
    caller: RateLimitCaller,
  ): Promise<RateLimitDecision> {
    const subject = rateLimitSubject(caller.userId, caller.ip);
    await ready;
    let counts: { name: RateLimitName; hits: number; resetSeconds: number }[];
    try {
      const now = Date.now();
      counts = await Promise.all(
        limits.map(async (name) => {
          const info = await store.increment(`${name}:${subject}`);
          const resetMs = info.resetTime ? info.resetTime.getTime() - now : RATE_LIMIT_WINDOW_SECONDS * 1000;
          // Never past the window (a key this call created resets a window after the store's answer).
          const resetSeconds = Math.min(RATE_LIMIT_WINDOW_SECONDS, Math.max(1, Math.ceil(resetMs / 1000)));
          return { name, hits: info.totalHits, resetSeconds };
        }),
      );
    } catch (e) {
      failing = true;
      options.onStoreError(e);
      return options.fallback ? options.fallback.consume(limits, caller) : ALLOWED;
    }
    if (failing) {
      failing = false;
      options.onStoreBack?.();
    }
    const headers = {
      'RateLimit-Policy': counts
        .map((c) => `"${c.name}";q=${RATE_LIMITS[c.name]};w=${RATE_LIMIT_WINDOW_SECONDS}`)
        .join(', '),
      RateLimit: counts
        .map((c) => `"${c.name}";r=${Math.max(0, RATE_LIMITS[c.name] - c.hits)};t=${c.resetSeconds}`)
        .join(', '),
    };
    const over = counts
      .filter((c) => c.hits > RATE_LIMITS[c.name])
      .sort((a, b) => b.resetSeconds - a.resetSeconds)[0];
    if (!over) return { allowed: true, exceeded: undefined, retryAfterSeconds: 0, headers };
    return { allowed: false, exceeded: over.name, retryAfterSeconds: over.resetSeconds, headers };
  }
}

/** `RATE_LIMITS=off`: every call allowed, no headers (benchmarks, an operator's bulk import). */
export const rateLimitsOff: RateLimiter = {
  enabled: false,
  kind: 'off',
  consume: async () => ALLOWED,
};

/**
 * Builds the limiter the configuration asks for: off, in process, or in Redis over `redis` (one budget for
 * every instance sharing it; keys prefixed `notary:rl:`). While Redis does not answer, each instance counts
 * the calls it sees in its own memory (the limits still hold per instance; nothing is refused for Redis).
 */
export function createRateLimiter(
  config: { enabled: boolean },
  redis: RedisConnection | undefined,
  log: Log,
): RateLimiter {
  if (!config.enabled) return rateLimitsOff;
  const onStoreError = (e: unknown) => log.error({ err: e }, 'store error: call allowed');
  if (!redis) return storeRateLimiter(new MemoryStore(), 'memory', { onStoreError });
  const store = new RedisStore({
    prefix: 'notary:rl:',
    sendCommand: (...args: string[]) => redis.sendCommand(args),
  });
  // Redis away: each instance counts on its own until it answers again (one line each way, not one per call).
  let away = false;
  const fallback = storeRateLimiter(new MemoryStore(), 'memory', { onStoreError });
  return storeRateLimiter(store, 'redis', {
    fallback,
    onStoreError: (e) => {
      if (away) return;
      away = true;
      log.error({ err: e }, 'Redis unreachable: limits counted by this instance alone until it answers');
    },
    onStoreBack: () => {
      away = false;
      log.info('Redis answers again: limits shared by every instance');
    },
  });
}
