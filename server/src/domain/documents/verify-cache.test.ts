import type { VerifyByHashDto } from '@notary/shared';
import { describe, expect, it } from 'vitest';
import type { Invalidation, InvalidationBus } from '../../ports/cache-bus';
import { PublicVerifyCache } from './verify-cache';

const HASH = 'ab'.repeat(32);
const FOUND = { found: true, document: { serialNumber: 'X' } } as unknown as VerifyByHashDto;

/** A bus between cache instances in one process, as Redis pub/sub carries it between services. */
function sharedBus(): () => InvalidationBus & { sent: Invalidation[] } {
  const handlers: Array<{ from: object; handler: (i: Invalidation) => void }> = [];
  return () => {
    const self = {};
    const sent: Invalidation[] = [];
    return {
      sent,
      publish(invalidation) {
        sent.push(invalidation);
        for (const h of handlers) if (h.from !== self) h.handler(invalidation);
      },
      subscribe(handler) {
        handlers.push({ from: self, handler });
      },
      close: async () => {},
    };
  };
}

/** A database read the test settles by hand, counting the reads. */
function manualLoad() {
  const pending: Array<(answer: VerifyByHashDto) => void> = [];
  return {
    reads: () => pending.length,
    load: (_hash: string) => new Promise<VerifyByHashDto>((resolve) => pending.push(resolve)),
    settle: (i: number, answer: VerifyByHashDto) => pending[i]?.(answer),
  };
}

describe('PublicVerifyCache', () => {
  it('answers a known and an unknown hash from memory after one read each', async () => {
    const cache = new PublicVerifyCache();
    let reads = 0;
    const load = async (hash: string) => {
      reads++;
      return hash === HASH ? FOUND : { found: false };
    };
    expect(await cache.get(HASH, load)).toBe(FOUND);
    expect(await cache.get(HASH, load)).toBe(FOUND);
    const unknown = 'cd'.repeat(32);
    const first = await cache.get(unknown, load);
    expect(first).toEqual({ found: false });
    // The same object each time, so its JSON text is written once.
    expect(await cache.get(unknown, load)).toBe(first);
    expect(reads).toBe(2);
  });

  it('a new document drops the unknown answer of its hash, here and on the other instances', async () => {
    const bus = sharedBus();
    const [a, b] = [new PublicVerifyCache(bus()), new PublicVerifyCache(bus())];
    let exists = false;
    const load = async () => (exists ? FOUND : { found: false });
    expect(await a.get(HASH, load)).toEqual({ found: false });
    expect(await b.get(HASH, load)).toEqual({ found: false });
    exists = true;
    a.invalidate(HASH);
    expect(await a.get(HASH, load)).toBe(FOUND);
    expect(await b.get(HASH, load)).toBe(FOUND);
  });

  it('concurrent misses share one read', async () => {
    const cache = new PublicVerifyCache();
    const db = manualLoad();
    const answers = [cache.get(HASH, db.load), cache.get(HASH, db.load), cache.get(HASH, db.load)];
    expect(db.reads()).toBe(1);
    db.settle(0, { found: false });
    expect(await Promise.all(answers)).toEqual([{ found: false }, { found: false }, { found: false }]);
  });

  it('a read running when its hash is invalidated is not kept, and later callers read again', async () => {
    const cache = new PublicVerifyCache();
    const db = manualLoad();
    const early = cache.get(HASH, db.load);
    // The document is recorded (and committed) while the read that cannot see it is still running.
    cache.invalidate(HASH);
    const late = cache.get(HASH, db.load);
    expect(db.reads()).toBe(2);
    db.settle(0, { found: false });
    db.settle(1, FOUND);
    expect(await early).toEqual({ found: false });
    expect(await late).toBe(FOUND);
    // The stale "unknown" was not kept: the found answer is.
    expect(await cache.get(HASH, db.load)).toBe(FOUND);
    expect(db.reads()).toBe(2);
  });

  it('a failed read reaches its callers and keeps nothing', async () => {
    const cache = new PublicVerifyCache();
    let reads = 0;
    const failing = async (): Promise<VerifyByHashDto> => {
      reads++;
      throw new Error('database away');
    };
    await expect(cache.get(HASH, failing)).rejects.toThrow('database away');
    await expect(cache.get(HASH, failing)).rejects.toThrow('database away');
    expect(reads).toBe(2);
  });

  it('says what it holds without reading: nothing before a read, the answer after, nothing once invalidated', async () => {
    const cache = new PublicVerifyCache();
    const db = manualLoad();
    expect(cache.cached(HASH)).toBeUndefined();
    const answer = cache.get(HASH, db.load);
    // A read in flight is not an answer held.
    expect(cache.cached(HASH)).toBeUndefined();
    db.settle(0, FOUND);
    await answer;
    expect(cache.cached(HASH)).toBe(FOUND);
    cache.invalidate(HASH);
    expect(cache.cached(HASH)).toBeUndefined();
    expect(db.reads()).toBe(1);
  });
});
