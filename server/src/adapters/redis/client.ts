import type { Log } from '@notary/platform/log';
import { redactError, redactText, secretsOfUrl } from '@notary/platform/redact';
import { errorMessage } from '@notary/shared';

/** node-redis, loaded by `connectRedis` only: without `REDIS_URL` the service never pays its start-up cost. */
type NodeRedis = typeof import('redis');

/** Commands fail at once while the connection is down (no offline queue): callers fall back instead of waiting. */
function newClient(redis: NodeRedis, url: string, isConnected: () => boolean) {
  return redis.createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: 5_000,
      // The first connection fails fast (start refuses); later outages retry with a capped backoff.
      reconnectStrategy: (retries: number, cause: Error) =>
        isConnected() ? Math.min(100 * 2 ** retries, 5_000) : cause,
    },
  });
}

/** A connected node-redis client (`REDIS_URL`): rate limit counters and cache invalidations. */
export type RedisConnection = ReturnType<typeof newClient>;

/**
 * Connects to Redis at `url`; after the first connection the client reconnects by itself.
 * @throws Error naming `REDIS_URL` when the first connection fails: a misconfigured Redis must not let
 *   instances silently keep separate budgets.
 */
export async function connectRedis(url: string, log: Log): Promise<RedisConnection> {
  let connected = false;
  // `REDIS_URL` carries the password (`redis://:pass@host`): no piece of it is told in an error or a log line.
  const secrets = secretsOfUrl(url);
  const client = newClient(await import('redis'), url, () => connected);
  client.on('error', (e: unknown) => {
    if (connected) log.error({ err: redactError(e, secrets) }, 'connection error');
  });
  try {
    await client.connect();
  } catch (e) {
    throw new Error(`REDIS_URL: cannot reach Redis (${redactText(errorMessage(e), secrets)})`);
  }
  connected = true;
  return client;
}
