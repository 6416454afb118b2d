import { Migration } from '@mikro-orm/migrations';

export class Migration20261121061512 extends Migration {
  override name = 'Migration20261121061512';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "tenant" ("id" uuid not null, "kind" text not null, "external_id" varchar(128) not null, "name" varchar(200) not null, "serial_prefix" varchar(12) not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `alter table "tenant" add constraint "tenant_kind_external_id_unique" unique ("kind", "external_id");`,
    );

    this.addSql(
      `create table "document" ("id" uuid not null, "tenant_id" uuid not null, "serial_number" varchar(32) not null, "file_name" varchar(1024) not null, "file_size" bigint not null, "mime_type" varchar(255) not null, "sha256_hash" varchar(64) not null, "source_type" text not null, "source_uri" text null, "storage_key" varchar(512) null, "screenshot_key" varchar(512) null, "onchain_status" text not null default 'pending', "onchain_tx_hash" varchar(66) null, "onchain_attestation_uid" varchar(66) null, "onchain_at" timestamptz null, "stacks_status" text not null default 'pending', "stacks_tx_id" varchar(66) null, "stacks_anchored_at" timestamptz null, "consent_given" boolean not null, "consent_timestamp" timestamptz not null, "uploader_user_id" varchar(128) not null, "uploader_ip" varchar(64) null, "created_at" timestamptz not null, "published" boolean not null default false, "published_at" timestamptz null, "acervo_title" varchar(500) null, "acervo_author" varchar(500) null, "metadata" text null, "deleted_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(
      `alter table "document" add constraint "document_serial_number_unique" unique ("serial_number");`,
    );
    this.addSql(`create index "document_sha256_hash_index" on "document" ("sha256_hash");`);
    this.addSql(
      `create index "document_tenant_id_created_at_index" on "document" ("tenant_id", "created_at");`,
    );

    this.addSql(
      `create table "tenant_member" ("id" uuid not null, "tenant_id" uuid not null, "user_id" varchar(128) not null, "role" text not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "tenant_member_user_id_index" on "tenant_member" ("user_id");`);
    this.addSql(
      `alter table "tenant_member" add constraint "tenant_member_tenant_id_user_id_unique" unique ("tenant_id", "user_id");`,
    );

    this.addSql(
      `alter table "tenant" add constraint "tenant_kind_check" check ("kind" in ('personal', 'organization'));`,
    );

    this.addSql(
      `alter table "document" add constraint "document_tenant_id_foreign" foreign key ("tenant_id") references "tenant" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "document" add constraint "document_source_type_check" check ("source_type" in ('upload', 'ipfs', 'fileverse', 'web-capture'));`,
    );
    this.addSql(
      `alter table "document" add constraint "document_onchain_status_check" check ("onchain_status" in ('pending', 'registered'));`,
    );
    this.addSql(
      `alter table "document" add constraint "document_stacks_status_check" check ("stacks_status" in ('pending', 'registered'));`,
    );

    this.addSql(
      `alter table "tenant_member" add constraint "tenant_member_tenant_id_foreign" foreign key ("tenant_id") references "tenant" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "tenant_member" add constraint "tenant_member_role_check" check ("role" in ('owner', 'admin', 'editor', 'reader'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "document" drop constraint "document_tenant_id_foreign";`);
    this.addSql(`alter table "tenant_member" drop constraint "tenant_member_tenant_id_foreign";`);

    this.addSql(`drop table if exists "tenant" cascade;`);
    this.addSql(`drop table if exists "document" cascade;`);
    this.addSql(`drop table if exists "tenant_member" cascade;`);
  }
}
