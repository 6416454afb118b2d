import type { Log } from '@notary/platform/log';
import type { MonitorQueue } from '../ports/monitor-queue';
import type { JobQueue } from './boss';

/** Queue of monitoring runs: one job per run, keyed by monitoring and run number. */
export const MONITOR_RUN_QUEUE = 'monitor-run';

/** A run's job: which monitoring, which run. */
export interface MonitorRunJob {
  monitorId: string;
  run: number;
}

/** The runs' queue and how to stop the runs in progress. */
export interface MonitorRuns {
  queue: MonitorQueue;
  /**
   * Aborts the runs in progress (the service is stopping): their jobs fail while the database is still open and
   * are retried after `retryDelay` by whichever instance runs then, recording nothing now. Call before the job
   * queue stops.
   */
  stop(): void;
}

/** Retries of a run whose handler threw (the run is recorded once all the same: see `runMonitor`). */
const RUN_RETRY_LIMIT = 3;
/** Seconds before a failed or interrupted run is tried again. */
const RUN_RETRY_DELAY_SECONDS = 2;

/**
 * Creates the monitoring runs' queue on `jobs` (pg-boss, policy `exclusive`: one job queued or running per
 * `<monitorId>:<run>` key) and runs `handler` for each job once due, one at a time in this process (several
 * instances share the queue, each job going to one). A handler that throws fails the job, which pg-boss retries
 * up to three times (also one whose process died, once `expireInSeconds` passed); the run's row is unique by number, so a retry never records it twice.
 * @returns the `MonitorQueue` the domain schedules runs through, and `stop` for the runs in progress.
 */
export async function startMonitorRuns(
  jobs: JobQueue,
  handler: (job: MonitorRunJob, signal: AbortSignal) => Promise<void>,
  options: {
    log: Log;
    /** How long a run may take before pg-boss deems its worker gone and retries it (a capture's bound and more). */
    expireInSeconds: number;
    pollingIntervalSeconds?: number;
  },
): Promise<MonitorRuns> {
  const stopping = new AbortController();
  // A run cut by a crash is taken up again once its job expires: past one capture's bound, not pg-boss's 15 min.
  await jobs.boss.createQueue(MONITOR_RUN_QUEUE, {
    policy: 'exclusive',
    expireInSeconds: options.expireInSeconds,
  });
  const polling =
    options.pollingIntervalSeconds === undefined
      ? {}
      : { pollingIntervalSeconds: options.pollingIntervalSeconds };
  await jobs.boss.work<MonitorRunJob>(MONITOR_RUN_QUEUE, { batchSize: 1, ...polling }, async ([job]) => {
    if (!job) return;
    try {
      await handler(job.data, stopping.signal);
    } catch (e) {
      if (!stopping.signal.aborted) {
        options.log.error(
          { err: e, monitor: job.data.monitorId, run: job.data.run },
          'monitoring run failed',
        );
      }
      throw e;
    }
  });
  const queue: MonitorQueue = {
    scheduleRun: (tx, monitorId, run, at) =>
      jobs.sendInTransaction(tx, MONITOR_RUN_QUEUE, { monitorId, run } satisfies MonitorRunJob, {
        singletonKey: `${monitorId}:${run}`,
        startAfter: at,
        retryLimit: RUN_RETRY_LIMIT,
        retryDelay: RUN_RETRY_DELAY_SECONDS,
      }),
  };
  return { queue, stop: () => stopping.abort(new Error('The service is stopping')) };
}
