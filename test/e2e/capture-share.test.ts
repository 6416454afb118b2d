import { EventEmitter, once } from 'node:events';
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
  };
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
    // CAPTURE_CONCURRENCY 1 and 4 waiting places: the default share is 2.
    t = await startTestService('pglite');
    alice = await t.token(freshEmail('alice'));
    bob = await t.token(freshEmail('bob'));
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a tenant starting more captures than its share gets 429 at once while another tenant still gets a slot; slots come back', async () => {
    const browser = heldCapturer();
    t.service.deps.capturer = browser.capturer;
    expect(t.service.deps.captureShare.maxPerTenant).toBe(2);

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
