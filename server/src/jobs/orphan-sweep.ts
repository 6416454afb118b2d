import type { EntityManager } from '@mikro-orm/core';
import type { Log } from '@notary/platform/log';
import { type SweepReport, sweepOrphanedObjects } from '../domain/documents/orphans';
import type { ObjectStorage } from '../ports/storage';
import { type PeriodicJob, startPeriodicJob } from './periodic';

/** The periodic orphan sweep (see `startOrphanSweepJob`). */
export type OrphanSweepJob = PeriodicJob<SweepReport>;

/**
 * Every `intervalHours` (0: never), removes stored objects no live document references
 * (`sweepOrphanedObjects` with its default grace period). Sweeps never overlap; failures are logged and the next
 * tick tries again; the timer never keeps the process alive. Several instances may each run it: the sweep is
 * idempotent. `npm run notary -- storage:sweep` runs the same sweep on demand.
 */
export function startOrphanSweepJob(options: {
  fork: () => EntityManager;
  storage: ObjectStorage;
  intervalHours: number;
  log: Log;
}): OrphanSweepJob {
  return startPeriodicJob(options.intervalHours * 3600 * 1000, async () => {
    try {
      const report = await sweepOrphanedObjects(options.fork(), options.storage);
      if (report.removedCount + report.incompleteUploads > 0) {
        options.log.info(
          {
            removed: report.removedCount,
            incompleteUploads: report.incompleteUploads,
            scanned: report.scanned,
          },
          'orphan sweep removed objects without a document',
        );
      }
      return report;
    } catch (e) {
      options.log.error({ err: e }, 'orphan sweep failed; retrying at the next interval');
      return undefined;
    }
  });
}
