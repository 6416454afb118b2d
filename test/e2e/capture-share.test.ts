import { EventEmitter, once } from 'node:events';
import type { FairQueue, FairQueueSnapshot } from '@notary/platform/fair-queue';
import type { WebCapturer } from '@notary/server/ports/capture';
import { AppError, type ErrorBody } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../harness/http';
import { startTestService, type TestService } from '../harness/service';
import { freshEmail } from '../harness/tenants';

/**
 * A stand-in for the browser: each capture waits until the test lets it go, so that the test holds capture
 * slots for as long as it likes, without timing; released captures fail as an unreachable site would.
 */
function heldCapturer() {
  const held: Array<() => void> = [];
  const arrivals = new EventEmitter();
  let arrived = 0;
  const capturer: WebCapturer = {
    capture: () =>
      new Promise((_resolve, reject) => {
        held.push(() => reject(new AppError('BAD_GATEWAY', 'stand-in: the site could not be reached')));
        arrived++;
        arrivals.emit('capture');
      }),
  };
  return {
    capturer,
    /** Captures that reached the browser so far, released or not. */
    get count() {
      return arrived;
    },
    /** Resolves once `n` captures in all have reached the browser. */
    async reached(n: number): Promise<void> {
      while (arrived < n) await once(arrivals, 'capture');
    },
    releaseAll(): void {
      for (const release of held.splice(0)) release();
    },
    /** Lets the capture that reached the browser first (of those held) fail. */
    releaseFirst(): void {
      held.shift()?.();
    },
  };
}

/** Resolves once the queue's state satisfies `ready`, woken by its change events (no polling, no sleeps). */
async function queueState(queue: FairQueue, ready: (s: FairQueueSnapshot) => boolean): Promise<void> {
  while (!ready(queue.snapshot())) await once(queue, 'change');
}

describe('each tenant’s share of the capture slots (CAPTURE_TENANT_MAX)', () => {
  let t: TestService;
  let alice: string;
  let bob: string;
  const capture = (token: string) =>
    api<ErrorBody & { retryAfterSeconds?: number }>(t.url, '/api/documents/capture', {
      method: 'POST',
      token,
      body: { url: 'http://example.test/', consent: true },
    });

  beforeAll(async () => {
    // The capture queue sits before the browser: browsers enough for every capture here to reach the stand-in,
    // a share of 2 (the default share, half of the places, is the unit tests' business: capture-share.test.ts).
    t = await startTestService('pglite', { CAPTURE_CONCURRENCY: '5', CAPTURE_TENANT_MAX: '2' });
    alice = await t.token(freshEmail('alice'));
    bob = await t.token(freshEmail('bob'));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a tenant starting more captures than its share gets 429 at once while another tenant still gets a slot; slots come back', async () => {
    const browser = heldCapturer();
    t.service.deps.capturer = browser.capturer;
    expect(t.service.deps.captureQueue.maxPerKey).toBe(2);

    const running = [capture(alice), capture(alice)];
    await browser.reached(2);
    const third = await capture(alice);
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBe('30');
    expect(third.body).toEqual({
      message:
        'Your workspace already has 2 web captures in progress, the most it may have at once: wait for one to finish and try again',
      code: 'RATE_LIMITED',
      retryAfterSeconds: 30,
    });
    // The refused capture never reached the browser; another workspace's does.
    expect(browser.count).toBe(2);
    running.push(capture(bob));
    await browser.reached(3);

    browser.releaseAll();
    for (const answer of await Promise.all(running)) expect(answer.status).toBe(502);
    // Alice's slots came back with the failed captures.
    const again = [capture(alice), capture(alice)];
    await browser.reached(5);
    browser.releaseAll();
    for (const answer of await Promise.all(again)) expect(answer.status).toBe(502);
  });
});

describe('CAPTURE_TENANT_MAX=1', () => {
  let t: TestService;
  afterAll(async () => {
    await t?.close();
  });

  it('one capture at a time per workspace', async () => {
    t = await startTestService('pglite', { CAPTURE_TENANT_MAX: '1' });
    const token = await t.token(freshEmail('solo'));
    const browser = heldCapturer();
    t.service.deps.capturer = browser.capturer;
    const body = { url: 'http://example.test/', consent: true };
    const first = api(t.url, '/api/documents/capture', { method: 'POST', token, body });
    await browser.reached(1);
    const second = await api<ErrorBody>(t.url, '/api/documents/capture', { method: 'POST', token, body });
    expect(second.status).toBe(429);
    expect(second.body.message).toMatch(/already has 1 web capture in progress/);
    browser.releaseAll();
    expect((await first).status).toBe(502);
  });
});

describe('three accounts holding every capture place with pages that never finish', () => {
  let t: TestService;
  afterAll(async () => {
    await t?.close();
  });

  it('a fourth tenant takes the place of a waiting capture of the account holding most, and its capture starts as soon as one running capture ends', async () => {
    t = await startTestService('pglite', { CAPTURE_CONCURRENCY: '3', CAPTURE_TENANT_MAX: '3' });
    const [a, b, c, d] = await Promise.all(
      ['a', 'b', 'c', 'd'].map((n) => t.token(freshEmail(`sybil-${n}`))),
    );
    const browser = heldCapturer();
    t.service.deps.capturer = browser.capturer;
    const queue = t.service.deps.captureQueue;
    const capture = (token: string | undefined) =>
      api<ErrorBody>(t.url, '/api/documents/capture', {
        method: 'POST',
        token: token ?? '',
        body: { url: 'http://example.test/', consent: true },
      });

    // Three browsers and four waiting places: every one taken by the three accounts, a holding three.
    const sybils = [a, b, c].map(capture);
    await browser.reached(3);
    sybils.push(...[a, b, c].map(capture));
    await queueState(queue, (s) => s.waiting === 3);
    const evicted = capture(a);
    await queueState(queue, (s) => s.waiting === 4);
    expect(queue.snapshot()).toMatchObject({ running: 3, waiting: 4 });
    const refused = await capture(b);
    expect(refused.status).toBe(429);
    expect(refused.body.message).toBe('The capture queue is full: try again shortly');

    // The fourth tenant enters in place of a's newest waiting capture, which is refused as a full queue is.
    const fourth = capture(d);
    const lost = await evicted;
    expect(lost.status).toBe(429);
    expect(lost.body.message).toBe('The capture queue is full: try again shortly');
    expect(queue.snapshot().keys.find((k) => k.waiting === 1 && k.running === 0)).toBeDefined();

    // One running capture ends (the page failed): the next browser is the fourth tenant's.
    browser.releaseFirst();
    await browser.reached(4);
    const shares = queue.snapshot().keys;
    expect(shares).toHaveLength(4);
    expect(shares.filter((k) => k.running === 1)).toHaveLength(3);
    // The newcomer is the only tenant whose capture runs and who has none waiting beside it.
    expect(shares.filter((k) => k.running === 1 && k.waiting === 0)).toHaveLength(1);
    expect(shares.find((k) => k.running === 0)?.waiting).toBe(1);

    // Everything ends: the held captures fail as an unreachable site would.
    const all = Promise.all([...sybils, fourth]);
    let settled = false;
    void all.finally(() => {
      settled = true;
    });
    while (!settled) {
      const next = browser.reached(browser.count + 1);
      browser.releaseAll();
      await Promise.race([all, next]);
    }
    const statuses = (await all).map((r) => r.status);
    expect(statuses).toEqual([502, 502, 502, 502, 502, 502, 502]);
    expect(queue.snapshot()).toMatchObject({ running: 0, waiting: 0, keys: [] });
  });
});
