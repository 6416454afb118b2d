/**
 * Test support: a worker for `bounded-worker.test.ts` whose jobs misbehave on request (`spin` never returns,
 * `grow` allocates until the heap bound, `hang` never answers, `throw` fails) or answer their thread id.
 */
import { threadId } from 'node:worker_threads';
import { serveBoundedJobs } from './bounded-worker';

export type FixtureJob = 'echo' | 'spin' | 'grow' | 'hang' | 'throw';

serveBoundedJobs<FixtureJob, number>(async (job) => {
  switch (job) {
    case 'spin':
      for (;;) {
        // Busy forever: only the deadline ends it.
      }
    case 'grow': {
      const kept: number[][] = [];
      for (;;) kept.push(Array.from({ length: 1024 }, (_, i) => i));
    }
    case 'hang':
      return new Promise<never>(() => {});
    case 'throw':
      throw new Error('the job failed');
    default:
      return { output: threadId };
  }
});
