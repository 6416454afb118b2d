import { describe, expect, it } from 'vitest';
import { loadConfig } from './config';

/** `SIGNING_LEVEL`: the PAdES baseline level of signed certificates (ETSI EN 319 142-1). */
describe('SIGNING_LEVEL', () => {
  const cert = { SIGNING_CERT: 'signer.p12' };
  const tsa = { TSA_URL: 'http://127.0.0.1:9/tsa' };

  it('defaults to B-LTA with a TSA, else B-B', () => {
    expect(loadConfig({ ...cert, ...tsa }).signing?.level).toBe('B-LTA');
    expect(loadConfig(cert).signing?.level).toBe('B-B');
    expect(loadConfig({}).signing).toBeUndefined();
  });

  it('takes any level the configuration allows', () => {
    for (const level of ['B-B', 'B-T', 'B-LT', 'B-LTA'] as const) {
      expect(loadConfig({ ...cert, ...tsa, SIGNING_LEVEL: level }).signing?.level).toBe(level);
    }
    expect(loadConfig({ ...cert, SIGNING_LEVEL: 'B-B' }).signing?.level).toBe('B-B');
  });

  it('refuses a timestamped level without TSA_URL, and an unknown level', () => {
    for (const level of ['B-T', 'B-LT', 'B-LTA']) {
      expect(() => loadConfig({ ...cert, SIGNING_LEVEL: level })).toThrow(
        new RegExp(`SIGNING_LEVEL=${level} needs a Time-Stamping Authority for its timestamps: set TSA_URL`),
      );
    }
    expect(() => loadConfig({ ...cert, ...tsa, SIGNING_LEVEL: 'LTA' })).toThrow(/SIGNING_LEVEL/);
  });
});
