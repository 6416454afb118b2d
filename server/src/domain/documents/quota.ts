import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { AppError } from '@notary/shared';

/** Bytes in a GiB, for messages. */
const GIB = 1024 ** 3;

/*
 * What the quota counts: the file sizes of a tenant's live documents that have stored bytes, i.e. the
 * Document rows with `deleted_at is null and storage_key is not null`, summed over `file_size` (see
 * {@link countStoredBytes}). A web capture's screenshot, certificates and receipts made on demand, and
 * reference-only records (IPFS imports) cost nothing.
 *
 * `tenant_storage.used_bytes` holds that sum so that an upload reads one row instead of summing over an
 * archive of millions of documents. It moves only in the transactions that change the sum, and commits or
 * rolls back with them: the upload's row (`chargeStorage`), an LGPD deletion (`adjustUsedBytes` by minus the
 * file size) and an organization deletion's document batches (`deleteDocumentRows`); the row goes with its
 * tenant (foreign key, on delete cascade). The orphan sweep never touches it: the objects it removes have no
 * live row, so they were never counted (an upload whose process died before its row committed, the bytes of a
 * deletion cut short). `npm run notary -- storage:recount` recomputes it from the rows should it ever drift.
 *
 * Each statement on the counter takes its row lock until commit, so callers change it last in their
 * transaction: concurrent uploads and deletions of one tenant wait for each other only for the commit, and
 * never for object storage or the other statements.
 */

type Sql = SqlEntityManager;

/**
 * The sum the counter stands for, read from the Document rows: bytes of the tenant's live documents with
 * stored bytes. One aggregate over the tenant's rows (O(documents)): for the repair command and tests, never
 * for an upload.
 */
export async function countStoredBytes(em: EntityManager, tenantId: string): Promise<number> {
  const rows: { used: string | number | null }[] = await (em as Sql).execute(
    `select coalesce(sum(file_size), 0) as used from document
      where tenant_id = ? and deleted_at is null and storage_key is not null`,
    [tenantId],
  );
  return Number(rows[0]?.used ?? 0);
}

/**
 * Bytes the tenant keeps in object storage, from its counter (`tenant_storage`): one primary-key read. A
 * tenant without a counter row has stored nothing yet (rows are created by the first upload; the migration
 * that introduced them created one per existing tenant).
 */
export async function storageUsedBytes(em: EntityManager, tenantId: string): Promise<number> {
  const rows: { used: string | number }[] = await (em as Sql).execute(
    'select used_bytes as used from tenant_storage where tenant_id = ?',
    [tenantId],
  );
  return Number(rows[0]?.used ?? 0);
}

/**
 * Adds `deltaBytes` (negative: bytes no longer counted) to the tenant's counter, creating its row when
 * missing, and returns the new value in bytes. Call it inside the transaction that changes what is counted,
 * as its last statement (the row stays locked until commit).
 * @throws the database's foreign-key error when the tenant does not exist (deleted meanwhile).
 */
export async function adjustUsedBytes(
  em: EntityManager,
  tenantId: string,
  deltaBytes: number,
): Promise<number> {
  const rows: { used: string | number }[] = await (em as Sql).execute(
    `insert into tenant_storage (tenant_id, used_bytes, updated_at) values (?, ?, now())
     on conflict (tenant_id) do update
       set used_bytes = tenant_storage.used_bytes + excluded.used_bytes, updated_at = excluded.updated_at
     returning used_bytes as used`,
    [tenantId, deltaBytes],
  );
  return Number(rows[0]?.used ?? 0);
}

/** How a full quota reads: "10.0 GiB", or bytes under a MiB. */
function size(bytes: number): string {
  if (bytes >= GIB) return `${(bytes / GIB).toFixed(1)} GiB`;
  if (bytes >= 1024 ** 2) return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
  return `${bytes} bytes`;
}

/** The 413 of a full quota, naming the quota and what is used. */
function quotaFull(used: number, quotaBytes: number, incomingBytes: number): AppError {
  return new AppError(
    'PAYLOAD_TOO_LARGE',
    `This workspace's storage quota is full: ${size(used)} of ${size(quotaBytes)} used` +
      (incomingBytes > 0 ? `, and this file needs ${size(incomingBytes)}` : '') +
      '. Delete documents or ask the operator for more room.',
  );
}

/**
 * Refuses an upload of `incomingBytes` that would take the tenant past `quotaBytes` (per-tenant storage
 * quota), reading the counter (no lock: the exact check is {@link chargeStorage}'s). Returns the bytes still
 * free before this upload, so a caller can bound the stream by it. `quotaBytes` 0 means no quota (returns
 * `Infinity`).
 * @throws AppError('PAYLOAD_TOO_LARGE') naming the quota and what is used.
 */
export async function assertStorageRoom(
  em: EntityManager,
  tenantId: string,
  quotaBytes: number,
  incomingBytes: number,
): Promise<number> {
  if (quotaBytes === 0) return Number.POSITIVE_INFINITY;
  const used = await storageUsedBytes(em, tenantId);
  if (used + incomingBytes > quotaBytes) throw quotaFull(used, quotaBytes, incomingBytes);
  return quotaBytes - used;
}

/**
 * Inside the transaction that records a document with stored bytes: counts its `bytes` and, with a quota
 * (`quotaBytes` > 0), refuses it when the tenant would pass the quota. The increment takes the counter's row
 * lock, so two concurrent uploads cannot both fit in the same last free bytes; the refusal throws, and the
 * caller's transaction rolls back with the increment. Call it last in the transaction.
 * @throws AppError('PAYLOAD_TOO_LARGE') as {@link assertStorageRoom}; the database's foreign-key error when
 *   the tenant was deleted meanwhile.
 */
export async function chargeStorage(
  tx: EntityManager,
  tenantId: string,
  quotaBytes: number,
  bytes: number,
): Promise<void> {
  const used = await adjustUsedBytes(tx, tenantId, bytes);
  if (quotaBytes > 0 && used > quotaBytes) throw quotaFull(used - bytes, quotaBytes, bytes);
}

/**
 * Deletes the tenant's Document rows `ids` and takes their counted bytes off its counter, in one statement
 * (the organization deletion's batches: no moment where the rows are gone and the counter is not).
 * @returns the number of rows deleted.
 */
export async function deleteDocumentRows(
  em: EntityManager,
  tenantId: string,
  ids: readonly string[],
): Promise<number> {
  if (ids.length === 0) return 0;
  const rows: { deleted: string | number }[] = await (em as Sql).execute(
    `with gone as (
       delete from document where tenant_id = ? and id = any(?::uuid[])
       returning file_size, deleted_at is null and storage_key is not null as counted
     ), charged as (
       update tenant_storage
          set used_bytes = used_bytes - (select coalesce(sum(file_size), 0) from gone where counted),
              updated_at = now()
        where tenant_id = ? and exists (select 1 from gone where counted)
     )
     select count(*) as deleted from gone`,
    [tenantId, `{${ids.join(',')}}`, tenantId],
  );
  return Number(rows[0]?.deleted ?? 0);
}

/** One tenant's counter as `storage:recount` found it (`before`) and left it (`after`), in bytes. */
export interface RecountedTenant {
  tenantId: string;
  before: number;
  after: number;
}

/** What `storage:recount` did: how many tenants it recounted, and those whose counter had drifted. */
export interface RecountReport {
  checked: number;
  drifted: RecountedTenant[];
}

/** Tenants recounted per page when all are (`recountStorage` without a tenant). */
const RECOUNT_PAGE = 500;

/**
 * Recomputes one tenant's counter from its rows, in a transaction: locks the counter first (creating it when
 * missing), then sums, so an upload or deletion committing meanwhile is either in the sum or adjusts the
 * counter after it (they change it last, under the same lock). Returns before and after in bytes.
 */
async function recountTenant(em: EntityManager, tenantId: string): Promise<RecountedTenant> {
  return em.transactional(async (tx) => {
    const sql = tx as Sql;
    await sql.execute(
      `insert into tenant_storage (tenant_id, used_bytes, updated_at) values (?, 0, now())
       on conflict (tenant_id) do nothing`,
      [tenantId],
    );
    const locked: { used: string | number }[] = await sql.execute(
      'select used_bytes as used from tenant_storage where tenant_id = ? for update',
      [tenantId],
    );
    const before = Number(locked[0]?.used ?? 0);
    const after = await countStoredBytes(tx, tenantId);
    if (after !== before) {
      await sql.execute('update tenant_storage set used_bytes = ?, updated_at = now() where tenant_id = ?', [
        after,
        tenantId,
      ]);
    }
    return { tenantId, before, after };
  });
}

/**
 * `storage:recount`: recomputes the used-bytes counter of the tenant `tenantId` (or of every tenant, by id, a
 * page at a time) from its Document rows, each tenant in its own short transaction. Safe while the service
 * runs: uploads and deletions wait for a tenant's recount only during its sum.
 */
export async function recountStorage(em: EntityManager, tenantId?: string): Promise<RecountReport> {
  const report: RecountReport = { checked: 0, drifted: [] };
  const recount = async (id: string) => {
    const one = await recountTenant(em, id);
    report.checked++;
    if (one.before !== one.after) report.drifted.push(one);
  };
  if (tenantId !== undefined) {
    await recount(tenantId);
    return report;
  }
  let cursor: string | undefined;
  for (;;) {
    const page: { id: string }[] = await (em as Sql).execute(
      cursor === undefined
        ? 'select id from tenant order by id limit ?'
        : 'select id from tenant where id > ? order by id limit ?',
      cursor === undefined ? [RECOUNT_PAGE] : [cursor, RECOUNT_PAGE],
    );
    for (const { id } of page) await recount(id);
    const last = page.at(-1);
    if (!last || page.length < RECOUNT_PAGE) return report;
    cursor = last.id;
  }
}
