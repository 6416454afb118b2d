import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import type { Log } from '@notary/platform/log';
import { deleteDocumentRows } from '../../documents/quota';
import { heldAmong } from '../../retention/hold';
import type { HeldInBatch } from './hold';
import { clockOf, LEASE_MS, type OrgDeletionRunPorts } from './ports';
import { deleteKeys } from './sweep';

/** One document of a batch: its id and the keys of its stored objects. */
interface BatchDocument {
  id: string;
  storage_key: string | null;
  screenshot_key: string | null;
}

/** The deletion's counters after a batch committed. */
interface BatchProgress {
  deleted: number;
  batches: number;
  total: number | null;
}

/** A batch's outcome: held documents found (nothing deleted), or the counters it committed. */
type BatchOutcome = { held: HeldInBatch } | { progress: BatchProgress | undefined };

/**
 * Deletes the tenant's documents batch by batch, in id order from the row's cursor: each batch's stored
 * objects (file and screenshot) first, then, in one transaction, its rows (with their bytes off the storage
 * quota's counter) and the progress (cursor, counts, lease). Memory holds one batch; each batch reads one
 * index range (`document (tenant_id, id)`) after the cursor, never the entries of the batches already deleted.
 *
 * After a crash anywhere, the row's cursor is that of the last committed batch: the next run reads the batch
 * again, deletes its objects again (`ObjectStorage.delete` succeeds on a missing key) and then its rows.
 * Objects are always deleted before their rows, so a crash never leaves rows without objects to be found by
 * a row; a row inserted behind the cursor meanwhile (an upload still under way) is found by one more pass
 * from the start, which runs only when rows remain after the last batch.
 *
 * Each batch locks its rows and asks the retention rule (`heldAmong`) before deleting anything of it: when a
 * document of the batch is held (an act recorded during the run), nothing of the batch is deleted and the
 * held documents are returned (null when every document was deleted).
 */
export async function deleteDocuments(
  em: EntityManager,
  ports: OrgDeletionRunPorts,
  deletionId: string,
  tenantId: string,
  batchSize: number,
  log: Log,
): Promise<HeldInBatch | null> {
  const sql = em as SqlEntityManager;
  let cursor = await startingCursor(sql, deletionId, tenantId);
  for (;;) {
    const docs = await nextBatch(sql, tenantId, cursor, batchSize);
    if (docs.length > 0) {
      const last = (docs.at(-1) as { id: string }).id;
      const done = await deleteBatch(em, ports, deletionId, tenantId, docs);
      if ('held' in done) return done.held;
      cursor = last;
      if (done.progress) {
        const left = Math.max(0, (done.progress.total ?? 0) - done.progress.deleted);
        log.info(
          `${tenantId}: batch ${done.progress.batches} done, ${done.progress.deleted} documents deleted, ${left} left`,
        );
      }
      if (docs.length === batchSize) continue;
    }
    // Past the last id: done, unless rows were inserted behind the cursor meanwhile.
    if (cursor === null) return null;
    const behind: unknown[] = await sql.execute('select 1 from document where tenant_id = ? limit 1', [
      tenantId,
    ]);
    if (behind.length === 0) return null;
    cursor = null;
    await sql.execute('update org_deletion set document_cursor = null where id = ?', [deletionId]);
  }
}

/** The row's cursor; counts the tenant's documents into `documents_total` on the first pass. */
async function startingCursor(
  sql: SqlEntityManager,
  deletionId: string,
  tenantId: string,
): Promise<string | null> {
  const state: { documents_total: number | null; document_cursor: string | null }[] = await sql.execute(
    'select documents_total, document_cursor from org_deletion where id = ?',
    [deletionId],
  );
  if (state[0]?.documents_total == null) {
    const counted: { n: string | number }[] = await sql.execute(
      'select count(*) as n from document where tenant_id = ?',
      [tenantId],
    );
    await sql.execute('update org_deletion set documents_total = ? where id = ?', [
      Number(counted[0]?.n ?? 0),
      deletionId,
    ]);
  }
  return state[0]?.document_cursor ?? null;
}

/** The tenant's next `batchSize` documents after `cursor` (from the first when null), in id order. */
function nextBatch(
  sql: SqlEntityManager,
  tenantId: string,
  cursor: string | null,
  batchSize: number,
): Promise<BatchDocument[]> {
  return sql.execute(
    cursor === null
      ? 'select id, storage_key, screenshot_key from document where tenant_id = ? order by id limit ?'
      : 'select id, storage_key, screenshot_key from document where tenant_id = ? and id > ? order by id limit ?',
    cursor === null ? [tenantId, batchSize] : [tenantId, cursor, batchSize],
  );
}

/**
 * One batch in one transaction: locks its rows, asks the retention rule, then deletes its objects and its
 * rows and moves the row's cursor, counts and lease past it.
 */
async function deleteBatch(
  em: EntityManager,
  ports: OrgDeletionRunPorts,
  deletionId: string,
  tenantId: string,
  docs: readonly BatchDocument[],
): Promise<BatchOutcome> {
  const last = (docs.at(-1) as { id: string }).id;
  const now = clockOf(ports);
  return em.transactional(async (tx): Promise<BatchOutcome> => {
    // Retention, asked again with the batch's rows locked (an act being recorded holds a key-share lock
    // on its document's row until it commits; none can be recorded until this batch commits); the
    // objects are deleted under the lock, before their rows, so a held document keeps its file too.
    const ids = docs.map((d) => d.id);
    await (tx as SqlEntityManager).execute(
      'select id from document where id = any(?::uuid[]) order by id for update',
      [`{${ids.join(',')}}`],
    );
    const held = await heldAmong(tx, tenantId, ids, now);
    if (held.length > 0) {
      return { held: { count: held.length, rule: held[0]?.rule ?? 'notarial_act' } };
    }
    await deleteKeys(
      ports.storage,
      docs.flatMap((d) => [d.storage_key, d.screenshot_key]).filter((k): k is string => !!k),
    );
    const deleted = await deleteDocumentRows(tx, tenantId, ids);
    const rows: BatchProgress[] = await (tx as SqlEntityManager).execute(
      `update org_deletion
          set document_cursor = ?, documents_deleted = documents_deleted + ?, batches_done = batches_done + 1,
              progress_at = ?, lease_until = ?
        where id = ?
    returning documents_deleted as deleted, batches_done as batches, documents_total as total`,
      [last, deleted, now, new Date(now.getTime() + LEASE_MS), deletionId],
    );
    return { progress: rows[0] };
  });
}
