import { Migration } from '@mikro-orm/migrations';

export class Migration20261121074559 extends Migration {
  override name = 'Migration20261121074559';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "anchor_batch" ("id" uuid not null, "created_at" timestamptz not null, "leaf_count" int not null, "root" varchar(64) not null, "status" text not null default 'open', primary key ("id"));`,
    );

    this.addSql(
      `create table "anchor_tx" ("id" uuid not null, "batch_id" uuid not null, "chain" text not null, "state" text not null, "nonce" varchar(32) null, "tx_hash" varchar(66) null, "raw" bytea null, "replaced_tx_hashes" jsonb null, "max_fee" varchar(80) null, "priority_fee" varchar(80) null, "attempts" int not null default 0, "last_error" text null, "broadcast_at" timestamptz null, "next_attempt_at" timestamptz not null, "attestation_uid" varchar(66) null, "block_number" bigint null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `create index "anchor_tx_chain_state_next_attempt_at_index" on "anchor_tx" ("chain", "state", "next_attempt_at");`,
    );
    this.addSql(
      `alter table "anchor_tx" add constraint "anchor_tx_batch_id_chain_unique" unique ("batch_id", "chain");`,
    );

    this.addSql(
      `create table "document_anchor" ("document_id" uuid not null, "batch_id" uuid not null, "leaf_index" int not null, "proof" jsonb not null, primary key ("document_id"));`,
    );
    this.addSql(`create index "document_anchor_batch_id_index" on "document_anchor" ("batch_id");`);

    this.addSql(
      `alter table "anchor_batch" add constraint "anchor_batch_status_check" check ("status" in ('open', 'anchored', 'failed'));`,
    );

    this.addSql(
      `alter table "anchor_tx" add constraint "anchor_tx_batch_id_foreign" foreign key ("batch_id") references "anchor_batch" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "anchor_tx" add constraint "anchor_tx_chain_check" check ("chain" in ('evm', 'stacks'));`,
    );
    this.addSql(
      `alter table "anchor_tx" add constraint "anchor_tx_state_check" check ("state" in ('queued', 'signed', 'broadcast', 'included', 'confirmed', 'failed'));`,
    );

    this.addSql(
      `alter table "document_anchor" add constraint "document_anchor_document_id_foreign" foreign key ("document_id") references "document" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "document_anchor" add constraint "document_anchor_batch_id_foreign" foreign key ("batch_id") references "anchor_batch" ("id") on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "anchor_tx" drop constraint "anchor_tx_batch_id_foreign";`);
    this.addSql(`alter table "document_anchor" drop constraint "document_anchor_batch_id_foreign";`);

    this.addSql(`drop table if exists "anchor_batch" cascade;`);
    this.addSql(`drop table if exists "anchor_tx" cascade;`);
    this.addSql(`drop table if exists "document_anchor" cascade;`);
  }
}
