import { randomUUID } from 'node:crypto';
import type { Log } from '@notary/platform/log';
import type { Invalidation, InvalidationBus } from '../../ports/cache-bus';
import type { RedisConnection } from '../redis/client';

const CHANNEL = 'notary:cache-invalidation';

/**
 * Invalidations over Redis pub/sub (`REDIS_URL`): every instance subscribes on its own connection and drops
 * what another instance changed. Messages from this instance are ignored (it invalidated locally already).
 * A message lost while Redis is away is bounded by the caches' TTLs (60 s verification, 5 min acervo).
 */
export async function redisInvalidationBus(redis: RedisConnection, log: Log): Promise<InvalidationBus> {
  const origin = randomUUID();
  const handlers: Array<(invalidation: Invalidation) => void> = [];
  const subscriber = redis.duplicate();
  subscriber.on('error', (e: unknown) => log.error({ err: e }, 'subscriber error'));
  await subscriber.connect();
  await subscriber.subscribe(CHANNEL, (message: string) => {
    try {
      const parsed = JSON.parse(message) as { origin: string; invalidation: Invalidation };
      if (parsed.origin === origin) return;
      for (const handler of handlers) handler(parsed.invalidation);
    } catch (e) {
      log.error({ err: e }, 'unreadable message');
    }
  });
  return {
    publish(invalidation) {
      redis
        .publish(CHANNEL, JSON.stringify({ origin, invalidation }))
        .catch((e: unknown) => log.error({ err: e }, 'publish failed'));
    },
    subscribe(handler) {
      handlers.push(handler);
    },
    close: async () => {
      subscriber.destroy();
    },
  };
}
