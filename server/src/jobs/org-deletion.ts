import type { EntityManager } from '@mikro-orm/core';
import type { Log } from '@notary/platform/log';
import {
  type OrgDeletionRunPorts,
  type ResumeReport,
  resumeOrganizationDeletions,
} from '../domain/org/deletion';
import { type PeriodicJob, startPeriodicJob } from './periodic';

/** The organization deletions' resume job (see `startOrgDeletionJob`). */
export type OrgDeletionJob = PeriodicJob<ResumeReport>;

/** How often the job looks for deletions nobody runs, in seconds (the lease runs out after two minutes). */
export const ORG_DELETION_RESUME_SECONDS = 60;

/**
 * At start-up and every `intervalSeconds` (default 60; 0: only at start-up and through `runOnce`), finishes
 * the organization deletions that were confirmed but that no process runs any more: the process running one
 * was killed (SIGKILL, a crash, a deploy) and its lease ran out, or its run failed (provider, mail, storage)
 * a minute ago or more (`resumeOrganizationDeletions`). Batches and steps are logged at info through
 * `log`, what went wrong at warn or error; runs never overlap and the timer never keeps the process alive. Several instances
 * may run it: a deletion's lease lets one run it at a time.
 */
export function startOrgDeletionJob(options: {
  fork: () => EntityManager;
  ports: Omit<OrgDeletionRunPorts, 'log'>;
  intervalSeconds?: number;
  log: Log;
}): OrgDeletionJob {
  const job = startPeriodicJob(
    (options.intervalSeconds ?? ORG_DELETION_RESUME_SECONDS) * 1000,
    async (): Promise<ResumeReport | undefined> => {
      try {
        return await resumeOrganizationDeletions(options.fork(), { ...options.ports, log: options.log });
      } catch (e) {
        options.log.error(
          { err: e },
          'organization deletions: resume pass failed; retrying at the next interval',
        );
        return undefined;
      }
    },
  );
  // A deletion cut short by the previous process's end is picked up as soon as its lease runs out.
  void job.runOnce();
  return job;
}
