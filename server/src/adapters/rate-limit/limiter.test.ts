import { RATE_LIMITS } from '@notary/shared';
import { MemoryStore, type Store } from 'express-rate-limit';
import { describe, expect, it } from 'vitest';
import { storeRateLimiter } from './limiter';

/** A store that fails while `down` (Redis gone) and counts in memory otherwise. */
function flakyStore(): Store & { down: boolean } {
  const inner = new MemoryStore();
  const store = {
    down: false,
    init: (options: Parameters<NonNullable<Store['init']>>[0]) => inner.init(options),
    increment: (key: string) =>
      store.down ? Promise.reject(new Error('The client is closed')) : inner.increment(key),
    decrement: (key: string) => inner.decrement(key),
    resetKey: (key: string) => inner.resetKey(key),
  };
  return store;
}

describe('the shared limiter while its store is away', () => {
  const caller = { userId: 'u1', ip: null };

  it('counts in the fallback (per instance) while the store fails, and in the store again once it answers', async () => {
    const store = flakyStore();
    const errors: unknown[] = [];
    let back = 0;
    const fallback = storeRateLimiter(new MemoryStore(), 'memory', { onStoreError: () => undefined });
    const limiter = storeRateLimiter(store, 'redis', {
      fallback,
      onStoreError: (e) => errors.push(e),
      onStoreBack: () => back++,
    });
    expect((await limiter.consume(['upload'], caller)).allowed).toBe(true);
    store.down = true;
    const during = [];
    for (let i = 0; i <= RATE_LIMITS.upload; i++)
      during.push((await limiter.consume(['upload'], caller)).allowed);
    // The fallback counted from zero: the limit holds in this instance.
    expect(during).toEqual([...Array(RATE_LIMITS.upload).fill(true), false]);
    expect(errors.length).toBe(RATE_LIMITS.upload + 1);
    expect(back).toBe(0);
    store.down = false;
    const after = await limiter.consume(['upload'], caller);
    expect(after.allowed).toBe(true);
    expect(after.headers?.RateLimit).toMatch(new RegExp(`^"upload";r=${RATE_LIMITS.upload - 2};t=\\d+$`));
    expect(back).toBe(1);
  });

  it('without a fallback, a failing store lets the call through', async () => {
    const store = flakyStore();
    store.down = true;
    const limiter = storeRateLimiter(store, 'redis', { onStoreError: () => undefined });
    for (let i = 0; i <= RATE_LIMITS.upload; i++) {
      expect((await limiter.consume(['upload'], caller)).allowed).toBe(true);
    }
  });
});
