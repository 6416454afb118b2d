import { randomUUID } from 'node:crypto';
import { createLogger } from '@notary/platform/log';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QuotaCounter } from '../../ports/rate-limit';
import { connectRedis, type RedisConnection } from '../redis/client';
import { createQuotaCounter } from './quota';

/**
 * Hourly quotas (invitation mails) in process and in the machine's real Redis (127.0.0.1:6379): exact
 * thresholds, refused events not counted, two counters on one Redis sharing one budget (two instances).
 */

const log = createLogger({ level: 'error', format: 'text' });

describe('quota counter', () => {
  let redis: RedisConnection;
  beforeAll(async () => {
    redis = await connectRedis('redis://127.0.0.1:6379', log);
  });
  afterAll(() => {
    redis?.destroy();
  });

  const kinds: [string, () => QuotaCounter][] = [
    [
      'memory',
      () => createQuotaCounter({ enabled: true }, undefined, { windowSeconds: 3600, prefix: 't', log }),
    ],
    [
      'redis',
      () =>
        createQuotaCounter({ enabled: true }, redis, {
          windowSeconds: 3600,
          prefix: `t-${randomUUID()}`,
          log,
        }),
    ],
  ];

  it.each(kinds)(
    '%s: exactly the limit, then refused with the window reset; refusals use up nothing',
    async (_k, make) => {
      const quota = make();
      const user = { key: 'user:a', limit: 3 };
      const org = { key: 'org:o', limit: 5 };
      for (let i = 0; i < 3; i++) expect((await quota.consume([user, org])).allowed).toBe(true);
      const refused = await quota.consume([user, org]);
      expect(refused.allowed).toBe(false);
      expect(refused.exceeded).toBe('user:a');
      expect(refused.retryAfterSeconds).toBeGreaterThan(3500);
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(3600);
      // The refused ones did not count against the organization: 2 more from someone else fit, the third not.
      for (let i = 0; i < 5; i++) expect((await quota.consume([user, org])).allowed).toBe(false);
      const other = { key: 'user:b', limit: 3 };
      expect((await quota.consume([other, org])).allowed).toBe(true);
      expect((await quota.consume([other, org])).allowed).toBe(true);
      const full = await quota.consume([other, org]);
      expect(full).toMatchObject({ allowed: false, exceeded: 'org:o' });
    },
  );

  it('two counters on one Redis (two instances) share one budget', async () => {
    const prefix = `shared-${randomUUID()}`;
    const a = createQuotaCounter({ enabled: true }, redis, { windowSeconds: 3600, prefix, log });
    const b = createQuotaCounter({ enabled: true }, redis, { windowSeconds: 3600, prefix, log });
    const q = [{ key: 'user:x', limit: 4 }];
    const results = await Promise.all([a, b, a, b, a, b].map((c) => c.consume(q)));
    expect(results.filter((r) => r.allowed)).toHaveLength(4);
  });

  it('off (RATE_LIMITS=off) allows everything', async () => {
    const off = createQuotaCounter({ enabled: false }, undefined, { windowSeconds: 3600, prefix: 'x', log });
    for (let i = 0; i < 10; i++) expect((await off.consume([{ key: 'k', limit: 1 }])).allowed).toBe(true);
    expect(off.enabled).toBe(false);
  });
});
