import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { silentLog } from '@notary/platform/log';
import { clockOf, type DeletionTarget, type OrgDeletionRunPorts, RESUME_IDLE_MS, RESUME_PAGE } from './ports';
import { runDeletion } from './run';

/** What one pass of {@link resumeOrganizationDeletions} did. */
export interface ResumeReport {
  /** Deletions this pass ran to the end. */
  finished: number;
  /** Deletions whose run failed again (logged; the next pass retries). */
  failed: number;
  /** Deletions another run held meanwhile. */
  busy: number;
}

/**
 * The resume job's pass (`jobs/org-deletion.ts`, at start-up and every minute): runs to the end every started
 * deletion (`started_at` set) that nobody runs — its lease ran out (the process that ran it died: SIGKILL, a
 * crash, a deploy) or was released after a failure at least {@link RESUME_IDLE_MS} ago (so that the user's own
 * "confirm again" goes first). Deletions are read by id, a page at a time, and run one after the other; one
 * that fails is logged through `ports.log` and left for the next pass, the others go on.
 */
export async function resumeOrganizationDeletions(
  em: EntityManager,
  ports: OrgDeletionRunPorts,
): Promise<ResumeReport> {
  const report: ResumeReport = { finished: 0, failed: 0, busy: 0 };
  const log = ports.log ?? silentLog;
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const now = clockOf(ports);
    const idleSince = new Date(now.getTime() - RESUME_IDLE_MS);
    const page: { id: string }[] = await (em as SqlEntityManager).execute(
      `select id from org_deletion
        where id > ? and started_at is not null
          and (lease_until is null or lease_until < ?)
          and (progress_at is null or progress_at < ? or lease_until is not null)
        order by id limit ?`,
      [after, now, idleSince, RESUME_PAGE],
    );
    for (const { id } of page) {
      const target = await targetOf(em, id);
      if (!target) continue;
      log.info(`${target.tenantId}: resuming a deletion nobody runs`);
      try {
        if ((await runDeletion(em, ports, target)) === 'busy') report.busy++;
        else report.finished++;
      } catch (e) {
        report.failed++;
        log.error(`${target.tenantId}: resumed deletion failed, retrying later: ${String(e)}`);
      }
    }
    const last = page.at(-1);
    if (!last || page.length < RESUME_PAGE) return report;
    after = last.id;
  }
}

/** The target of a started deletion, from its row and its tenant; undefined when the tenant is gone. */
export async function targetOf(em: EntityManager, deletionId: string): Promise<DeletionTarget | undefined> {
  const rows: { tenant_id: string; external_id: string; name: string; kind: string }[] = await (
    em as SqlEntityManager
  ).execute(
    `select t.id as tenant_id, t.external_id, t.name, t.kind
       from org_deletion d join tenant t on t.id = d.tenant_id
      where d.id = ?`,
    [deletionId],
  );
  const row = rows[0];
  if (row?.kind !== 'organization') return undefined;
  return { deletionId, tenantId: row.tenant_id, organizationId: row.external_id, organizationName: row.name };
}
