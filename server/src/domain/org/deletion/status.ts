import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { RESUME_PAGE } from './ports';

/** One started deletion as `org:deletion-status` shows it. */
export interface DeletionStatus {
  tenantId: string;
  /** The organization's id at the identity provider. */
  organizationId: string;
  organizationName: string;
  startedAt: Date;
  /** The step it is at (or stopped at): `members`, `documents`, `notices`, `provider`, `rows`. */
  step: 'members' | 'documents' | 'notices' | 'provider' | 'rows';
  /** Documents when the deletion reached them (null before). */
  documentsTotal: number | null;
  documentsDeleted: number;
  /** `documentsTotal - documentsDeleted` (0 at least; uploads during the deletion are not in the total). */
  documentsLeft: number | null;
  batchesDone: number;
  /** When a run last moved it (a batch, a claim, a failure). */
  progressAt: Date | null;
  /** Whether a run holds it now (its lease has not run out). */
  running: boolean;
}

/** A started deletion's row joined with its tenant's, as the database returns it. */
interface StatusRow {
  id: string;
  tenant_id: string;
  external_id: string;
  name: string;
  started_at: Date | string;
  notice_recipients: unknown;
  files_deleted_at: Date | string | null;
  notices_sent_at: Date | string | null;
  provider_deleted_at: Date | string | null;
  documents_total: number | null;
  documents_deleted: number;
  batches_done: number;
  progress_at: Date | string | null;
  lease_until: Date | string | null;
}

/**
 * Every started organization deletion with its progress, oldest first, read a page at a time (a handful in
 * practice: a finished deletion leaves no row). The source of `npm run notary -- org:deletion-status`.
 * @param now the time a lease is compared with (`running`).
 */
export async function organizationDeletionStatus(
  em: EntityManager,
  now = new Date(),
): Promise<DeletionStatus[]> {
  const out: DeletionStatus[] = [];
  let after = '00000000-0000-0000-0000-000000000000';
  for (;;) {
    const rows: StatusRow[] = await (em as SqlEntityManager).execute(
      `select d.id, t.id as tenant_id, t.external_id, t.name, d.started_at, d.notice_recipients,
              d.files_deleted_at, d.notices_sent_at, d.provider_deleted_at, d.documents_total,
              d.documents_deleted, d.batches_done, d.progress_at, d.lease_until
         from org_deletion d join tenant t on t.id = d.tenant_id
        where d.started_at is not null and d.id > ?
        order by d.id limit ?`,
      [after, RESUME_PAGE],
    );
    for (const r of rows) out.push(statusOf(r, now));
    const last = rows.at(-1);
    if (!last || rows.length < RESUME_PAGE) break;
    after = last.id;
  }
  return out.sort((a, b) => a.startedAt.getTime() - b.startedAt.getTime());
}

/** The status of one row: its step is the first not recorded done. */
function statusOf(r: StatusRow, now: Date): DeletionStatus {
  const step: DeletionStatus['step'] =
    r.notice_recipients === null
      ? 'members'
      : !r.files_deleted_at
        ? 'documents'
        : !r.notices_sent_at
          ? 'notices'
          : !r.provider_deleted_at
            ? 'provider'
            : 'rows';
  const total = r.documents_total === null ? null : Number(r.documents_total);
  return {
    tenantId: r.tenant_id,
    organizationId: r.external_id,
    organizationName: r.name,
    startedAt: new Date(r.started_at),
    step,
    documentsTotal: total,
    documentsDeleted: Number(r.documents_deleted),
    documentsLeft: total === null ? null : Math.max(0, total - Number(r.documents_deleted)),
    batchesDone: Number(r.batches_done),
    progressAt: r.progress_at === null ? null : new Date(r.progress_at),
    running: r.lease_until !== null && new Date(r.lease_until).getTime() > now.getTime(),
  };
}
