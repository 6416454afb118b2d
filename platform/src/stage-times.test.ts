import { describe, expect, it } from 'vitest';
import { StageTimes, timed } from './stage-times';

describe('StageTimes', () => {
  it('adds repeated stages up and writes them as Server-Timing, in the order first measured', () => {
    const times = new StageTimes();
    times.add('hash', 1.5);
    times.add('quota', 0.25);
    times.add('hash', 2);
    expect(times.header()).toBe('hash;dur=3.50, quota;dur=0.25');
  });

  it('times work that rejects as well, and measures nothing without a recorder', async () => {
    const times = new StageTimes();
    await expect(timed(times, 'record', () => Promise.reject(new Error('conflict')))).rejects.toThrow(
      'conflict',
    );
    expect(times.header()).toMatch(/^record;dur=\d+\.\d\d$/);
    await expect(timed(undefined, 'record', async () => 7)).resolves.toBe(7);
  });
});
