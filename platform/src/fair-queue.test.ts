import { describe, expect, it } from 'vitest';
import { FairQueue } from './fair-queue';

class Full extends Error {}
class KeyFull extends Error {}

function queue(concurrency: number, maxWaiting: number, maxPerKey: number) {
  return new FairQueue({
    concurrency,
    maxWaiting,
    maxPerKey,
    full: () => new Full('full'),
    keyFull: (n) => new KeyFull(`key holds ${n}`),
  });
}

/** A task that runs until the test ends it; `started` says whether the queue let it run. */
function task(q: FairQueue, key: string, signal?: AbortSignal) {
  let end!: () => void;
  const gate = new Promise<void>((resolve) => {
    end = resolve;
  });
  const t = { key, started: false, end, done: Promise.resolve() as Promise<unknown> };
  t.done = q
    .run(
      key,
      async () => {
        t.started = true;
        await gate;
        return key;
      },
      signal,
    )
    .catch((e: unknown) => e);
  return t;
}

/** Lets the queue's promise callbacks run (no timers). */
const settle = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

describe('FairQueue', () => {
  it('refuses limits out of range', () => {
    expect(() => queue(0, 1, 1)).toThrow();
    expect(() => queue(1, -1, 1)).toThrow();
    expect(() => queue(1, 1, 0)).toThrow();
  });

  it('runs up to the concurrency, queues the rest, refuses past the waiting bound and past a key’s cap', async () => {
    const q = queue(1, 2, 2);
    const refusals: string[] = [];
    q.on('refused', (key, why) => refusals.push(`${key} ${why}`));
    const a1 = task(q, 'a');
    const a2 = task(q, 'a');
    await settle();
    expect([a1.started, a2.started]).toEqual([true, false]);
    expect(await task(q, 'a').done).toBeInstanceOf(KeyFull);
    const b1 = task(q, 'b');
    await settle();
    // Every place is taken, and c holds none but no key holds two waiting places to give: full.
    expect(q.snapshot()).toMatchObject({ running: 1, waiting: 2 });
    const c = task(q, 'c');
    // a holds two places (one running, one waiting): c takes a's newest waiter's place.
    expect(await a2.done).toBeInstanceOf(Full);
    expect(q.snapshot().keys).toEqual([
      { key: 'a', running: 1, waiting: 0 },
      { key: 'b', running: 0, waiting: 1 },
      { key: 'c', running: 0, waiting: 1 },
    ]);
    // Now each key holds one place: a fourth key has no waiter to replace.
    expect(await task(q, 'd').done).toBeInstanceOf(Full);
    expect(refusals).toEqual(['a key-full', 'a replaced', 'd full']);
    a1.end();
    expect(await a1.done).toBe('a');
    await settle();
    expect([b1.started, c.started]).toEqual([true, false]);
    b1.end();
    await settle();
    expect(c.started).toBe(true);
    c.end();
    expect(await c.done).toBe('c');
    expect(q.snapshot()).toEqual({
      concurrency: 1,
      maxWaiting: 2,
      maxPerKey: 2,
      running: 0,
      waiting: 0,
      keys: [],
    });
  });

  it('serves keys in turn: a key with nothing running comes before keys already running, then round robin', async () => {
    const q = queue(3, 4, 3);
    // Three keys, each with one running and more waiting (the "Sybil" accounts).
    const sybils = [...['a', 'b', 'c'], ...['a', 'b', 'c']].map((k) => task(q, k));
    const extra = task(q, 'a');
    await settle();
    expect(q.snapshot()).toMatchObject({ running: 3, waiting: 4 });
    // A fourth key holding nothing enters in the place of a's newest waiter.
    const d = task(q, 'd');
    expect(await extra.done).toBeInstanceOf(Full);
    // Whichever running task ends, d is next.
    sybils[1]?.end();
    await settle();
    expect(d.started).toBe(true);
    expect(sybils.filter((t) => t.started).map((t) => t.key)).toEqual(['a', 'b', 'c']);
    // Then the rotation goes on from d: a, then b, then c.
    const [a1, , c1, a2, b2, c2] = sybils;
    a1?.end();
    await settle();
    expect([a2?.started, b2?.started, c2?.started]).toEqual([true, false, false]);
    c1?.end();
    await settle();
    expect([b2?.started, c2?.started]).toEqual([true, false]);
    d.end();
    await settle();
    expect(c2?.started).toBe(true);
    expect(sybils.map((t) => t.started)).toEqual([true, true, true, true, true, true]);
    for (const t of sybils) t.end();
    await Promise.all(sybils.map((t) => t.done));
    expect(q.snapshot().keys).toEqual([]);
  });

  it('round robin among waiting keys: one key with many waiters does not go ahead of another', async () => {
    const q = queue(1, 6, 6);
    const first = task(q, 'x');
    const many = [task(q, 'a'), task(q, 'a'), task(q, 'a')];
    const b = task(q, 'b');
    await settle();
    const started: string[] = [];
    const all = [...many, b];
    first.end();
    for (let i = 0; i < all.length; i++) {
      await settle();
      const now = all.find((t) => t.started && !started.includes(String(all.indexOf(t))));
      if (!now) break;
      started.push(String(all.indexOf(now)));
      now.end();
    }
    // a, then b (its turn), then a's others.
    expect(started).toEqual(['0', '3', '1', '2']);
  });

  it('an abort while waiting leaves the queue; after start it is the task’s own business', async () => {
    const q = queue(1, 2, 2);
    const running = task(q, 'a');
    const caller = new AbortController();
    const waiting = task(q, 'b', caller.signal);
    await settle();
    expect(q.snapshot()).toMatchObject({ running: 1, waiting: 1 });
    const changed = new Promise<void>((resolve) => q.once('change', resolve));
    caller.abort(new Error('left'));
    await changed;
    expect(await waiting.done).toEqual(new Error('left'));
    expect(waiting.started).toBe(false);
    expect(q.snapshot()).toMatchObject({
      running: 1,
      waiting: 0,
      keys: [{ key: 'a', running: 1, waiting: 0 }],
    });
    expect(await task(q, 'c', AbortSignal.abort(new Error('already'))).done).toEqual(new Error('already'));
    running.end();
    await running.done;
    expect(q.held('a')).toBe(0);
  });

  it('acquire: a place held beyond one call, freed once however often the release is called', async () => {
    const q = queue(1, 1, 1);
    const release = await q.acquire('a');
    const next = q.acquire('b');
    release();
    release();
    const releaseB = await next;
    expect(q.snapshot()).toMatchObject({ running: 1, waiting: 0 });
    releaseB();
    expect(q.snapshot()).toMatchObject({ running: 0, waiting: 0 });
  });

  it('a failing task frees its place', async () => {
    const q = queue(1, 0, 1);
    await expect(q.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await q.run('a', async () => 'ok')).toBe('ok');
    expect(q.held('a')).toBe(0);
  });
});
