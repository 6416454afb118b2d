import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../../../../test/harness/service';
import { createInnerContext } from '../../context';
import { createCaller } from '../../router';

/** The system router called without HTTP (tRPC's server-side caller over an inner context), limits on. */
describe('system router (createCaller)', () => {
  let t: TestService;

  beforeAll(async () => {
    t = await startTestService('pglite', { RATE_LIMITS: 'on' });
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A caller whose response headers are recorded. */
  function recording() {
    const headers = new Map<string, string>();
    const caller = createCaller(
      createInnerContext(t.service.deps, {
        ip: '127.0.0.1',
        setHeader: (name, value) => headers.set(name, value),
      }),
    );
    return { caller, headers };
  }

  it('health: ok with the current time, and never counted against a limit (probes poll it)', async () => {
    const { caller, headers } = recording();
    const health = await caller.system.health();
    expect(health.status).toBe('ok');
    expect(Number.isNaN(Date.parse(health.timestamp))).toBe(false);
    expect([...headers.keys()]).toEqual([]);
  });

  it('onchainInfo: from configuration (ANCHORING=off: both chains disabled), counted against the global limit', async () => {
    const { caller, headers } = recording();
    expect(await caller.system.onchainInfo()).toMatchObject({ enabled: false, stacksEnabled: false });
    expect(headers.get('RateLimit-Policy')).toBeDefined();
    expect(headers.get('RateLimit')).toBeDefined();
  });
});
