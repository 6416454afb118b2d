import { describe, expect, it } from 'vitest';
import { publicUrlFor, startWarnings } from './bootstrap';
import { loadConfig } from './config';

/** Safe defaults: what production refuses, what development keeps local. */
describe('safe defaults', () => {
  it('production never guesses the anchoring mode: no chain and no ANCHORING is refused, naming ANCHORING', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(
      /ANCHORING: NODE_ENV=production needs a chain \(EVM_RPC_URL and\/or STACKS_API_URL\) or an explicit ANCHORING=off/,
    );
    expect(loadConfig({ NODE_ENV: 'production', ANCHORING: 'off' }).anchoring).toEqual({ mode: 'off' });
    // Development still defaults to the devnets.
    expect(loadConfig({}).anchoring.mode).toBe('devnet');
  });

  it('RATE_LIMITS=off is refused in production, allowed elsewhere with a warning at start', () => {
    expect(() => loadConfig({ NODE_ENV: 'production', ANCHORING: 'off', RATE_LIMITS: 'off' })).toThrow(
      /RATE_LIMITS=off is refused with NODE_ENV=production/,
    );
    const off = loadConfig({ RATE_LIMITS: 'off' });
    expect(off.rateLimits).toEqual({ enabled: false, redisUrl: undefined });
    expect(startWarnings(off)).toEqual([
      "RATE_LIMITS=off: the spec's rate limits are not enforced (benchmarks, bulk imports only)",
    ]);
    expect(loadConfig({}).rateLimits.enabled).toBe(true);
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).rateLimits.redisUrl).toBe(
      'redis://127.0.0.1:6379',
    );
  });

  it('development listens on 127.0.0.1 unless HOST is set, and then warns which conveniences are on', () => {
    const dev = loadConfig({});
    expect(dev).toMatchObject({ env: 'development', host: '127.0.0.1', hostExplicit: false });
    expect(startWarnings(dev)).toEqual([]);
    // The URL the README and browsers use stays `localhost`.
    expect(publicUrlFor(dev, 3000)).toBe('http://localhost:3000');
    const exposed = loadConfig({ HOST: '0.0.0.0' });
    expect(startWarnings(exposed)).toEqual([
      'NODE_ENV=development listening on 0.0.0.0: development defaults face the network; its conveniences ' +
        "(the e-mail access answer's token) stay served to direct requests from this machine only. " +
        'Deploy with NODE_ENV=production',
    ]);
    expect(startWarnings(loadConfig({ HOST: '127.0.0.1' }))).toEqual([]);
    expect(loadConfig({ NODE_ENV: 'production', ANCHORING: 'off' }).host).toBe('0.0.0.0');
    expect(startWarnings(loadConfig({ NODE_ENV: 'production', ANCHORING: 'off', HOST: '0.0.0.0' }))).toEqual(
      [],
    );
  });
});
