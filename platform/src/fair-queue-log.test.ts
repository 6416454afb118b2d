import { describe, expect, it } from 'vitest';
import { FairQueue } from './fair-queue';
import { logQueueRefusals } from './fair-queue-log';
import { recordingLog } from './log.testing';

describe('logQueueRefusals', () => {
  it('logs each refusal with the queue’s depth and the shares of the keys holding the most', async () => {
    const queue = new FairQueue({
      concurrency: 1,
      maxWaiting: 0,
      maxPerKey: 1,
      full: () => new Error('full'),
      keyFull: () => new Error('key full'),
    });
    const log = recordingLog();
    logQueueRefusals('capture', queue, log);
    const release = await queue.acquire('tenant-a');
    await expect(queue.acquire('tenant-b')).rejects.toThrow('full');
    expect(log.lines).toEqual([
      {
        level: 'warn',
        msg: 'queue refused a place',
        fields: {
          queue: 'capture',
          key: 'tenant-b',
          why: 'full',
          concurrency: 1,
          maxWaiting: 0,
          maxPerKey: 1,
          running: 1,
          waiting: 0,
          top: [{ key: 'tenant-a', running: 1, waiting: 0 }],
        },
      },
    ]);
    release();
  });
});
