import { AppError } from '@notary/shared';
import { describe, expect, it } from 'vitest';
import { CaptureShare, defaultCaptureTenantMax } from './capture-share';

/** A capture that runs until the test lets it end. */
function pending() {
  let finish!: (ok: boolean) => void;
  const done = new Promise<string>((resolve, reject) => {
    finish = (ok) => (ok ? resolve('captured') : reject(new AppError('BAD_GATEWAY', 'unreachable')));
  });
  return { done, finish };
}

describe('CaptureShare', () => {
  it('the default share is half of the slots, at least 1', () => {
    expect(defaultCaptureTenantMax(1, 4)).toBe(2);
    expect(defaultCaptureTenantMax(4, 4)).toBe(4);
    expect(defaultCaptureTenantMax(1, 0)).toBe(1);
    expect(() => new CaptureShare(0, 30)).toThrow();
  });

  it('one tenant past its share is refused at once with 429 and the wait; another tenant still gets a slot; slots come back however captures end', async () => {
    const share = new CaptureShare(2, 30);
    const a1 = pending();
    const a2 = pending();
    const first = share.run('a', () => a1.done);
    const second = share.run('a', () => a2.done);
    let started = false;
    const refused = await share
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
    const other = share.run('b', () => b.done);
    expect([share.inProgress('a'), share.inProgress('b')]).toEqual([2, 1]);

    a1.finish(true);
    a2.finish(false);
    b.finish(true);
    expect(await first).toBe('captured');
    await expect(second).rejects.toMatchObject({ code: 'BAD_GATEWAY' });
    expect(await other).toBe('captured');
    expect([share.inProgress('a'), share.inProgress('b')]).toEqual([0, 0]);
    // A failed capture gave its slot back like a finished one: the tenant may start two again.
    const again = [pending(), pending()];
    const runs = again.map((p) => share.run('a', () => p.done));
    expect(share.inProgress('a')).toBe(2);
    for (const p of again) p.finish(true);
    await Promise.all(runs);
  });

  it('a share of one says so in the singular', async () => {
    const share = new CaptureShare(1, 5);
    const only = pending();
    const running = share.run('t', () => only.done);
    await expect(share.run('t', async () => 'x')).rejects.toMatchObject({
      message:
        'Your workspace already has 1 web capture in progress, the most it may have at once: wait for it to finish and try again',
    });
    only.finish(true);
    await running;
  });
});
