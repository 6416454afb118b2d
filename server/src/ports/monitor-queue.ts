import type { EntityManager } from '@mikro-orm/core';

/**
 * What monitorings need from the job queue: a run scheduled as a job with its start time, inside the
 * transaction that records the monitoring or the previous run, so the schedule lives in the database and
 * survives restarts (never a timer). Adapter: pg-boss (`jobs/monitor-runs.ts`), wired by the composition root.
 */
export interface MonitorQueue {
  /**
   * Schedules run `run` of monitoring `monitorId` at `at` (or at once when `at` has passed), in the transaction of
   * `tx` (the transaction's EntityManager). One job per run number: scheduling the same run again is a no-op.
   * @throws Error when the queue is not running (the caller's transaction then rolls back).
   */
  scheduleRun(tx: EntityManager, monitorId: string, run: number, at: Date): Promise<void>;
}

/** The queue of a process that runs no jobs (the operator CLI): monitorings cannot be created there. */
export const idleMonitorQueue: MonitorQueue = {
  scheduleRun: async () => {
    throw new Error('The job queue is not running: monitorings cannot be scheduled from here');
  },
};
