import type { EntityManager } from '@mikro-orm/core';
import { type SweepReport, sweepOrphanedObjects } from '../domain/documents/orphans';
import type { ObjectStorage } from '../ports/storage';
import type { JobLog } from './reconcile';

/** The periodic orphan sweep (see `startOrphanSweepJob`). */
export interface OrphanSweepJob {
  /** Sweeps now (or joins the sweep in progress); undefined when it failed (logged). */
  runOnce(): Promise<SweepReport | undefined>;
  /** Stops the timer and waits for a sweep in progress. */
  stop(): Promise<void>;
}

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
  log: JobLog;
}): OrphanSweepJob {
  let running: Promise<SweepReport | undefined> | undefined;
  let stopped = false;
  const run = async (): Promise<SweepReport | undefined> => {
    try {
      const report = await sweepOrphanedObjects(options.fork(), options.storage);
      if (report.removed.length + report.incompleteUploads > 0) {
        options.log.info(
          `[storage] orphan sweep: ${report.removed.length} objects without a document removed, ` +
            `${report.incompleteUploads} incomplete uploads removed (${report.scanned} scanned)`,
        );
      }
      return report;
    } catch (e) {
      options.log.error('[storage] orphan sweep failed; retrying at the next interval', e);
      return undefined;
    }
  };
  const runOnce = () => {
    running ??= run().finally(() => {
      running = undefined;
    });
    return running;
  };
  const timer =
    options.intervalHours > 0
      ? setInterval(
          () => {
            if (!stopped && !running) void runOnce();
          },
          options.intervalHours * 3600 * 1000,
        )
      : undefined;
  timer?.unref();
  return {
    runOnce,
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
