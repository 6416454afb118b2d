import { errorMessage } from '@notary/shared';
import { describe, expect, it } from 'vitest';
import { BoundedWorkerPool, WorkerBoundError } from './bounded-worker';
import type { FixtureJob } from './bounded-worker.testing';

/** The pool against a real worker thread (TypeScript entry loaded through tsx, as in production). */

const ENTRY = new URL('./bounded-worker.testing.ts', import.meta.url);

function pool(options: Partial<{ maxIdle: number; maxJobsPerWorker: number; deadlineMs: number }> = {}) {
  return new BoundedWorkerPool<FixtureJob, number>(
    ENTRY,
    { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 8, deadlineMs: options.deadlineMs ?? 60_000 },
    {
      maxIdle: options.maxIdle ?? 1,
      maxJobsPerWorker: options.maxJobsPerWorker ?? 100,
      retireHeapBytes: 1024 * 1024 * 1024,
      idleMs: 60_000,
    },
  );
}

describe('BoundedWorkerPool', () => {
  it('answers from a worker thread and reuses it for the next job', async () => {
    const p = pool();
    const first = await p.run('echo');
    expect(first).toBeGreaterThan(0);
    expect(await p.run('echo')).toBe(first);
    await p.close();
  });

  it('replaces a worker after maxJobsPerWorker jobs', async () => {
    const p = pool({ maxJobsPerWorker: 1 });
    const first = await p.run('echo');
    expect(await p.run('echo')).not.toBe(first);
    await p.close();
  });

  it('stops a job past the heap bound (memory) and goes on with a new worker', async () => {
    const p = pool();
    const before = await p.run('echo');
    const error = await p.run('grow').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerBoundError);
    expect((error as WorkerBoundError).bound).toBe('memory');
    expect(errorMessage(error)).toMatch(/32 MB heap/);
    const after = await p.run('echo');
    expect(after).not.toBe(before);
    await p.close();
  });

  it('terminates a job that never ends at the deadline', async () => {
    const p = pool({ deadlineMs: 300 });
    const error = await p.run('spin').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkerBoundError);
    expect((error as WorkerBoundError).bound).toBe('deadline');
    await p.close();
  });

  it('terminates a running job when its signal aborts, with the signal reason', async () => {
    const p = pool();
    const controller = new AbortController();
    const running = p.run('hang', { signal: controller.signal });
    const reason = new Error('client left');
    controller.abort(reason);
    await expect(running).rejects.toBe(reason);
    await expect(p.run('echo', { signal: controller.signal })).rejects.toBe(reason);
    expect(await p.run('echo')).toBeGreaterThan(0);
    await p.close();
  });

  it('rejects with the message of a job that threw, and keeps the worker', async () => {
    const p = pool();
    const before = await p.run('echo');
    await expect(p.run('throw')).rejects.toThrow('the job failed');
    expect(await p.run('echo')).toBe(before);
    await p.close();
  });
});
