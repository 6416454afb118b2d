import type { Log } from '@notary/platform/log';
import { MemoryStore, type Options, type Store } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import type { Quota, QuotaCounter, QuotaDecision } from '../../ports/rate-limit';
import type { RedisConnection } from '../redis/client';

const ALLOWED: QuotaDecision = { allowed: true, exceeded: undefined, retryAfterSeconds: 0 };

/**
 * A counter over an express-rate-limit `Store` (its `MemoryStore`, or rate-limit-redis's `RedisStore`) with a
 * fixed window of `windowSeconds`, the same counting as the request limits (`limiter.ts`) with a longer window.
 */
export function storeQuotaCounter(
  store: Store,
  options: { windowSeconds: number; serialize: boolean; onStoreError: (e: unknown) => void },
): QuotaCounter {
  const windowMs = options.windowSeconds * 1000;
  // Both stores read only `windowMs` of the middleware's options.
  const ready = Promise.resolve(store.init?.({ windowMs } as Options)).catch(options.onStoreError);
  // MemoryStore hands back its live counter object: in process, events are counted one after the other.
  let turn: Promise<unknown> = Promise.resolve();
  const inTurn = <T>(work: () => Promise<T>): Promise<T> => {
    if (!options.serialize) return work();
    const result = turn.then(work);
    turn = result.catch(() => undefined);
    return result;
  };
  return {
    enabled: true,
    windowSeconds: options.windowSeconds,
    consume: (quotas) => inTurn(() => count(quotas)),
  };

  async function count(quotas: readonly Quota[]): Promise<QuotaDecision> {
    await ready;
    let counts: { key: string; over: boolean; resetSeconds: number }[];
    try {
      const now = Date.now();
      counts = await Promise.all(
        quotas.map(async (q) => {
          const info = await store.increment(q.key);
          const resetMs = info.resetTime ? info.resetTime.getTime() - now : windowMs;
          return {
            key: q.key,
            over: info.totalHits > q.limit,
            // Never past the window: a key created by this very call is reset a window after the store's
            // answer, a few milliseconds after `now`.
            resetSeconds: Math.min(options.windowSeconds, Math.max(1, Math.ceil(resetMs / 1000))),
          };
        }),
      );
    } catch (e) {
      options.onStoreError(e);
      return ALLOWED;
    }
    const over = counts.filter((c) => c.over).sort((a, b) => b.resetSeconds - a.resetSeconds)[0];
    if (!over) return ALLOWED;
    try {
      await Promise.all(quotas.map((q) => store.decrement(q.key)));
    } catch (e) {
      options.onStoreError(e);
    }
    return { allowed: false, exceeded: over.key, retryAfterSeconds: over.resetSeconds };
  }
}

/**
 * Builds the quota counter the configuration asks for: off (`RATE_LIMITS=off`), in process, or in Redis over
 * `redis` (keys prefixed `notary:quota:<prefix>:`).
 */
export function createQuotaCounter(
  config: { enabled: boolean },
  redis: RedisConnection | undefined,
  options: { windowSeconds: number; prefix: string; log: Log },
): QuotaCounter {
  if (!config.enabled) {
    return { enabled: false, windowSeconds: options.windowSeconds, consume: async () => ALLOWED };
  }
  const onStoreError = (e: unknown) =>
    options.log.error({ err: e, quota: options.prefix }, 'store error: allowed');
  if (!redis) {
    return storeQuotaCounter(new MemoryStore(), {
      windowSeconds: options.windowSeconds,
      serialize: true,
      onStoreError,
    });
  }
  const store = new RedisStore({
    prefix: `notary:quota:${options.prefix}:`,
    sendCommand: (...args: string[]) => redis.sendCommand(args),
  });
  return storeQuotaCounter(store, { windowSeconds: options.windowSeconds, serialize: false, onStoreError });
}
