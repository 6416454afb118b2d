import { AppError } from '@notary/shared';
import { describe, expect, it } from 'vitest';
import { createCaptureQueue, defaultCaptureTenantMax } from './capture-share';

/** A capture that runs until the test lets it end. */
function pending() {
  let finish!: (ok: boolean) => void;
  const done = new Promise<string>((resolve, reject) => {
    finish = (ok) => (ok ? resolve('captured') : reject(new AppError('BAD_GATEWAY', 'unreachable')));
  });
  return { done, finish };
}

/** A queue where browsers are never the limit: only the tenant's share is. */
const share = (tenantMax: number, retryAfterSeconds: number) =>
  createCaptureQueue({ concurrency: 16, queueMax: 0, tenantMax, retryAfterSeconds });

describe('the capture queue: each tenant’s share', () => {
  it('the default share is half of the slots, at least 1', () => {
    expect(defaultCaptureTenantMax(1, 4)).toBe(2);
    expect(defaultCaptureTenantMax(4, 4)).toBe(4);
    expect(defaultCaptureTenantMax(1, 0)).toBe(1);
    expect(() => share(0, 30)).toThrow();
    expect(
      createCaptureQueue({ concurrency: 1, queueMax: 4, tenantMax: undefined, retryAfterSeconds: 30 })
        .maxPerKey,
    ).toBe(2);
  });

  it('one tenant past its share is refused at once with 429 and the wait; another tenant still gets a slot; slots come back however captures end', async () => {
    const queue = share(2, 30);
    const a1 = pending();
    const a2 = pending();
    const first = queue.run('a', () => a1.done);
    const second = queue.run('a', () => a2.done);
    let started = false;
    const refused = await queue
      .run('a', async () => {
        started = true;
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(started).toBe(false);
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({
      code: 'RATE_LIMITED',
      retryAfterSeconds: 30,
      message:
        'Your workspace already has 2 web captures in progress, the most it may have at once: wait for one to finish and try again',
    });
    const b = pending();
    const other = queue.run('b', () => b.done);
    expect([queue.held('a'), queue.held('b')]).toEqual([2, 1]);

    a1.finish(true);
    a2.finish(false);
    b.finish(true);
    expect(await first).toBe('captured');
    await expect(second).rejects.toMatchObject({ code: 'BAD_GATEWAY' });
    expect(await other).toBe('captured');
    expect([queue.held('a'), queue.held('b')]).toEqual([0, 0]);
    // A failed capture gave its slot back like a finished one: the tenant may start two again.
    const again = [pending(), pending()];
    const runs = again.map((p) => queue.run('a', () => p.done));
    expect(queue.held('a')).toBe(2);
    for (const p of again) p.finish(true);
    await Promise.all(runs);
  });

  it('a share of one says so in the singular', async () => {
    const queue = share(1, 5);
    const only = pending();
    const running = queue.run('t', () => only.done);
    await expect(queue.run('t', async () => 'x')).rejects.toMatchObject({
      message:
        'Your workspace already has 1 web capture in progress, the most it may have at once: wait for it to finish and try again',
    });
    only.finish(true);
    await running;
  });

  it('three accounts holding every place with captures that never end: a fourth tenant takes a waiting place and runs as soon as one capture ends; the queue full says so', async () => {
    const queue = createCaptureQueue({ concurrency: 3, queueMax: 4, tenantMax: 3, retryAfterSeconds: 30 });
    const sybil = [...['a', 'b', 'c'], ...['a', 'b', 'c'], 'a'].map((tenant) => ({ tenant, ...pending() }));
    const runs = sybil.map((p) => queue.run(p.tenant, () => p.done).catch((e: unknown) => e));
    expect(queue.snapshot()).toMatchObject({ running: 3, waiting: 4 });
    // Every place is taken and every tenant holds at most one waiting place: another of theirs is refused.
    await expect(queue.run('b', async () => 'x')).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      retryAfterSeconds: 30,
      message: 'The capture queue is full: try again shortly',
    });
    let started = false;
    const fourth = queue.run('d', async () => {
      started = true;
      return 'captured';
    });
    // a held the most places: its newest waiting capture gave its place to d, refused as a full queue is.
    expect(await runs[6]).toMatchObject({
      code: 'RATE_LIMITED',
      message: 'The capture queue is full: try again shortly',
    });
    const changed = new Promise<void>((resolve) => queue.once('change', resolve));
    sybil[1]?.finish(false);
    await changed;
    expect(await fourth).toBe('captured');
    expect(started).toBe(true);
    for (const p of sybil) {
      // The refused one's capture never ran: nobody awaits it.
      p.done.catch(() => undefined);
      p.finish(false);
    }
    await Promise.all(runs);
    expect(queue.snapshot()).toMatchObject({ running: 0, waiting: 0, keys: [] });
  });
});
