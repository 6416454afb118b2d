import type { SqlEntityManager } from '@mikro-orm/sql';

/**
 * Where the sequencer starts reading pending log entries, so that integrating one entry costs the same at a
 * thousand leaves as at a million. Entries are numbered (`log_entry.id`) when their document's transaction
 * inserts them but become visible only when it commits, in any order: the sequencer cannot simply resume after
 * the last id it integrated, since a transaction holding a lower id may still commit. And every integrated entry
 * leaves a dead row version behind (until a vacuum, which the embedded database never runs), so reading "every
 * entry still without an index" from the start of the table costs as much as the log is long.
 *
 * The bound is an id below which every entry is final (committed or rolled back): it is first noted as a
 * candidate (the id sequence's last value, then, in a later statement, the first transaction id not yet
 * assigned), and becomes the bound once the oldest transaction still running is past that transaction id (every
 * transaction that could hold an id up to the candidate has then ended) and the sequencer integrated them all.
 * This rests on the entry's transaction having its transaction id before its entry takes an id
 * (`TransparencyLog.append` makes sure of it). A new candidate is noted only once the last one became the bound,
 * so a steady stream of uploads cannot keep postponing it.
 *
 * State: the one row of `log_sequencer`, read and written in the sequencer's transaction, under its advisory
 * lock (PostgreSQL 13+ `pg_current_snapshot`, `pg_snapshot_xmin`, `pg_snapshot_xmax`).
 */

interface BoundRow {
  safe_id: string | number;
  candidate_id: string | number | null;
  candidate_xid: string | number | null;
}

/**
 * The id after which the pending entries lie: every entry with an id up to it is final and integrated, never read
 * again by the sequencer. Run inside the sequencer's transaction, after its advisory lock. `empty`: the log has
 * no checkpoint (new, or its tree was cleared): the bound starts over from 0, so every entry without an index is
 * read again.
 * @returns the bound, 0 before the first promotion.
 */
export async function pendingBound(sql: SqlEntityManager, empty: boolean): Promise<number> {
  await sql.execute('insert into log_sequencer (id, safe_id) values (1, 0) on conflict (id) do nothing');
  if (empty) {
    await sql.execute(
      'update log_sequencer set safe_id = 0, candidate_id = null, candidate_xid = null where id = 1',
    );
    return 0;
  }
  const [row]: { safe_id: string | number }[] = await sql.execute(
    'select safe_id from log_sequencer where id = 1',
  );
  return Number(row?.safe_id ?? 0);
}

/**
 * Moves the bound on once the sequencer's step has integrated what it read: the noted candidate becomes the bound
 * when the transactions that could hold its ids are over and none of those entries is still pending (a step
 * integrates at most a batch; the rest waits for the next one), and a new candidate is noted when none waits.
 * Run in the same transaction as `pendingBound`, after the step's indexes were written.
 */
export async function advanceBound(sql: SqlEntityManager): Promise<void> {
  const [row]: BoundRow[] = await sql.execute(
    'select safe_id, candidate_id, candidate_xid from log_sequencer where id = 1',
  );
  if (!row) return;
  let safe = Number(row.safe_id);
  if (row.candidate_xid != null && row.candidate_id != null) {
    // One statement, one snapshot: when the oldest running transaction is past the candidate's, every entry up to
    // the candidate is committed (and visible here) or gone.
    const [now]: { over: boolean; left: boolean }[] = await sql.execute(
      `select pg_snapshot_xmin(pg_current_snapshot())::text::bigint >= ? as over,
              exists (select 1 from log_entry where id > ? and id <= ? and leaf_index is null) as left`,
      [row.candidate_xid, safe, row.candidate_id],
    );
    if (!now?.over || now.left) return;
    safe = Math.max(safe, Number(row.candidate_id));
  }
  // Two statements: the transaction id must be read after the sequence, or an entry numbered in between by a
  // transaction that got its id after the snapshot would be taken as final.
  const [seq]: { last: string | number | null }[] = await sql.execute(
    `select pg_sequence_last_value(pg_get_serial_sequence('log_entry', 'id')) as last`,
  );
  const [next]: { xmax: string }[] = await sql.execute(
    'select pg_snapshot_xmax(pg_current_snapshot())::text as xmax',
  );
  const candidate = seq?.last == null || !next ? null : Number(seq.last);
  await sql.execute(
    'update log_sequencer set safe_id = ?, candidate_id = ?, candidate_xid = ? where id = 1',
    [safe, candidate, candidate === null ? null : next?.xmax],
  );
}
