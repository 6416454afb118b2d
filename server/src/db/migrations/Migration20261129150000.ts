import { Migration } from '@mikro-orm/migrations';

/**
 * The transparency log (docs/anchoring.md, The transparency log): `log_entry` (one row per notarization, pending
 * until its `leaf_index` is set), `log_tile` (the tree's tiles) and `log_checkpoint` (signed tree heads). No foreign
 * keys: the log outlives any deletion.
 */
export class Migration20261129150000 extends Migration {
  override name = 'Migration20261129150000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "log_entry" ("id" bigserial not null, "document_id" uuid null, "entry" bytea not null, "leaf_index" bigint null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "log_entry_document_id_index" on "log_entry" ("document_id");`);
    this.addSql(
      `alter table "log_entry" add constraint "log_entry_leaf_index_unique" unique ("leaf_index");`,
    );
    // The sequencer reads the pending entries in id order: without this it scans the whole log every step.
    this.addSql(`create index "log_entry_pending_index" on "log_entry" ("id") where "leaf_index" is null;`);
    this.addSql(
      `create table "log_tile" ("level" smallint not null, "idx" bigint not null, "hashes" bytea not null, primary key ("level", "idx"));`,
    );
    this.addSql(
      `create table "log_checkpoint" ("size" bigint not null, "root" bytea not null, "note" text not null, "created_at" timestamptz not null, primary key ("size"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "log_checkpoint" cascade;`);
    this.addSql(`drop table if exists "log_tile" cascade;`);
    this.addSql(`drop table if exists "log_entry" cascade;`);
  }
}
