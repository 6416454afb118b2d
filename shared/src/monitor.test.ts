import { describe, expect, it } from 'vitest';
import { checkMonitorChain, isoDurationSeconds, type MonitorChainRun } from './monitor';

describe('isoDurationSeconds', () => {
  it('reads days, hours, minutes, seconds and weeks', () => {
    expect(isoDurationSeconds('PT6H')).toBe(21_600);
    expect(isoDurationSeconds('P30D')).toBe(2_592_000);
    expect(isoDurationSeconds('P1DT1H1M1S')).toBe(90_061);
    expect(isoDurationSeconds('P2W')).toBe(1_209_600);
    expect(isoDurationSeconds('PT1.9S')).toBe(1);
  });

  it('refuses what is not such a duration, zero, years and months', () => {
    for (const bad of ['', 'P', 'PT', 'P1Y', 'P1M', 'PT0S', '6h', 'pt6h', 'P1DT', `P${'9'.repeat(40)}D`]) {
      expect(isoDurationSeconds(bad), bad).toBeUndefined();
    }
  });
});

const hash = (c: string) => c.repeat(64);
const run = (n: number, waczSha256: string | null, previousWaczSha256: string | null): MonitorChainRun => ({
  run: n,
  observedAt: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString(),
  outcome: waczSha256 ? 'seen' : 'unavailable',
  cause: waczSha256 ? null : 'dns',
  serialNumber: waczSha256 ? `AB-${n}` : null,
  waczSha256,
  previousWaczSha256,
});

describe('checkMonitorChain', () => {
  const [r1, r2, r3, r4] = [
    run(1, hash('a'), null),
    run(2, hash('b'), hash('a')),
    run(3, null, hash('b')),
    run(4, hash('c'), hash('b')),
  ] as const;
  const chain = [r1, r2, r3, r4];

  it('accepts a chain whose every run names the archive before it (a failed run carries the link on)', () => {
    expect(checkMonitorChain(chain)).toEqual([]);
  });

  it('finds a run removed, even a failed one', () => {
    expect(checkMonitorChain([r1, r3, r4])).not.toEqual([]);
    expect(checkMonitorChain([r1, r2, r4]).map((b) => b.kind)).toContain('numbering');
  });

  it('finds two runs swapped, numbers and all', () => {
    const swapped = [r1, { ...r4, run: 2 }, r3, { ...r2, run: 4 }];
    expect(checkMonitorChain(swapped).filter((b) => b.kind === 'link')).not.toEqual([]);
  });
});
