import { Migration } from '@mikro-orm/migrations';

/**
 * The transparency log's sequencer reads the pending entries from a bound on (`domain/log/pending-bound.ts`),
 * kept in the one row of `log_sequencer`. The uniqueness of `log_entry.leaf_index` becomes a partial index over
 * the integrated entries: an index that also held the pending (null) ones would be the database's pick to find
 * them, and it keeps every integrated entry's dead null version until a vacuum, so that read grew with the log.
 */
export class Migration20261129172000 extends Migration {
  override name = 'Migration20261129172000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "log_sequencer" ("id" smallint not null, "safe_id" bigint not null, "candidate_id" bigint null, "candidate_xid" bigint null, primary key ("id"));`,
    );
    this.addSql(`alter table "log_entry" drop constraint "log_entry_leaf_index_unique";`);
    this.addSql(
      `create unique index "log_entry_leaf_index_unique" on "log_entry" ("leaf_index") where "leaf_index" is not null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "log_entry_leaf_index_unique";`);
    this.addSql(
      `alter table "log_entry" add constraint "log_entry_leaf_index_unique" unique ("leaf_index");`,
    );
    this.addSql(`drop table if exists "log_sequencer" cascade;`);
  }
}
