import { describe, expect, it } from 'vitest';
import { loadConfig } from './config';

/** `ANCHOR_STUCK_SECONDS`, `ANCHOR_FEE_BUMP_PERCENT` and `ANCHOR_LEASE_SECONDS` (README, Configuration). */
describe('replacement of stuck anchor transactions', () => {
  it('unset: nothing in the configuration (the runner keeps its defaults)', () => {
    const anchoring = loadConfig({}).anchoring;
    expect(anchoring).not.toHaveProperty('stuckAfterSeconds');
    expect(anchoring).not.toHaveProperty('feeBumpPercent');
    expect(anchoring).not.toHaveProperty('leaseSeconds');
  });

  it('set: the bound and the bump, on the devnet and on configured chains', () => {
    expect(loadConfig({ ANCHOR_STUCK_SECONDS: '90', ANCHOR_FEE_BUMP_PERCENT: '10' }).anchoring).toMatchObject(
      {
        mode: 'devnet',
        stuckAfterSeconds: 90,
        feeBumpPercent: 10,
      },
    );
    const configured = loadConfig({
      EVM_RPC_URL: 'https://sepolia.base.org',
      EVM_PRIVATE_KEY: `0x${'11'.repeat(32)}`,
      EVM_NETWORK: 'base-sepolia',
      ANCHOR_FEE_BUMP_PERCENT: '25.5',
    }).anchoring;
    expect(configured).toMatchObject({ mode: 'configured', feeBumpPercent: 25.5 });
    expect(configured).not.toHaveProperty('stuckAfterSeconds');
  });

  it('a bump below 10 % is refused at start: nodes would refuse every replacement', () => {
    expect(() => loadConfig({ ANCHOR_FEE_BUMP_PERCENT: '9' })).toThrow(
      /ANCHOR_FEE_BUMP_PERCENT.*at least 10/,
    );
    expect(() => loadConfig({ ANCHOR_STUCK_SECONDS: '0' })).toThrow(/ANCHOR_STUCK_SECONDS/);
  });

  it('the lease: set on either mode; below 10 s refused (a step of the worker can take that long)', () => {
    expect(loadConfig({ ANCHOR_LEASE_SECONDS: '15' }).anchoring).toMatchObject({ leaseSeconds: 15 });
    expect(() => loadConfig({ ANCHOR_LEASE_SECONDS: '5' })).toThrow(/ANCHOR_LEASE_SECONDS/);
  });
});
