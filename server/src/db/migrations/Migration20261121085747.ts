import { Migration } from '@mikro-orm/migrations';

export class Migration20261121085747 extends Migration {
  override name = 'Migration20261121085747';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "document_deletion" ("id" uuid not null, "document_id" uuid not null, "tenant_id" uuid not null, "deleted_by" varchar(128) not null, "deleted_by_email" varchar(254) null, "role" text not null, "ip" varchar(64) null, "reason" varchar(500) null, "deleted_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `alter table "document_deletion" add constraint "document_deletion_document_id_unique" unique ("document_id");`,
    );
    this.addSql(`create index "document_deletion_tenant_id_index" on "document_deletion" ("tenant_id");`);

    this.addSql(
      `create table "access_policy" ("id" uuid not null, "document_id" uuid not null, "kind" text not null, "token_hash" varchar(64) null, "permission" text not null, "expires_at" timestamptz null, "max_accesses" int null, "access_count" int not null default 0, "addresses" jsonb null, "created_by" varchar(128) not null, "created_at" timestamptz not null, "revoked_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(
      `alter table "access_policy" add constraint "access_policy_token_hash_unique" unique ("token_hash");`,
    );
    this.addSql(
      `create index "access_policy_document_id_kind_index" on "access_policy" ("document_id", "kind");`,
    );

    this.addSql(
      `create table "access_log_entry" ("id" uuid not null, "document_id" uuid not null, "policy_id" uuid not null, "accessor_type" text not null, "accessor_identifier" varchar(320) not null, "permission" text not null, "ip" varchar(64) null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "access_log_entry_policy_id_index" on "access_log_entry" ("policy_id");`);
    this.addSql(
      `create index "access_log_entry_document_id_created_at_index" on "access_log_entry" ("document_id", "created_at");`,
    );

    this.addSql(
      `create table "acervo_token" ("id" uuid not null, "tenant_id" uuid not null, "token_hash" varchar(64) not null, "created_by" varchar(128) not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `alter table "acervo_token" add constraint "acervo_token_tenant_id_unique" unique ("tenant_id");`,
    );
    this.addSql(
      `alter table "acervo_token" add constraint "acervo_token_token_hash_unique" unique ("token_hash");`,
    );

    this.addSql(
      `create table "wallet_signature_use" ("hash" varchar(64) not null, "used_at" timestamptz not null, "expires_at" timestamptz not null, primary key ("hash"));`,
    );
    this.addSql(
      `create index "wallet_signature_use_expires_at_index" on "wallet_signature_use" ("expires_at");`,
    );

    this.addSql(
      `create index "document_tenant_id_published_published_at_index" on "document" ("tenant_id", "published", "published_at");`,
    );

    this.addSql(
      `alter table "document_deletion" add constraint "document_deletion_document_id_foreign" foreign key ("document_id") references "document" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "document_deletion" add constraint "document_deletion_tenant_id_foreign" foreign key ("tenant_id") references "tenant" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "document_deletion" add constraint "document_deletion_role_check" check ("role" in ('owner', 'admin', 'editor', 'reader'));`,
    );

    this.addSql(
      `alter table "access_policy" add constraint "access_policy_document_id_foreign" foreign key ("document_id") references "document" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "access_policy" add constraint "access_policy_kind_check" check ("kind" in ('link', 'public', 'wallet', 'email'));`,
    );
    this.addSql(
      `alter table "access_policy" add constraint "access_policy_permission_check" check ("permission" in ('download', 'view'));`,
    );

    this.addSql(
      `alter table "access_log_entry" add constraint "access_log_entry_document_id_foreign" foreign key ("document_id") references "document" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "access_log_entry" add constraint "access_log_entry_policy_id_foreign" foreign key ("policy_id") references "access_policy" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "access_log_entry" add constraint "access_log_entry_accessor_type_check" check ("accessor_type" in ('anonymous', 'wallet', 'email'));`,
    );
    this.addSql(
      `alter table "access_log_entry" add constraint "access_log_entry_permission_check" check ("permission" in ('download', 'view'));`,
    );

    this.addSql(
      `alter table "acervo_token" add constraint "acervo_token_tenant_id_foreign" foreign key ("tenant_id") references "tenant" ("id") on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "access_log_entry" drop constraint "access_log_entry_policy_id_foreign";`);

    this.addSql(`drop table if exists "document_deletion" cascade;`);
    this.addSql(`drop table if exists "access_policy" cascade;`);
    this.addSql(`drop table if exists "access_log_entry" cascade;`);
    this.addSql(`drop table if exists "acervo_token" cascade;`);
    this.addSql(`drop table if exists "wallet_signature_use" cascade;`);

    this.addSql(`drop index "document_tenant_id_published_published_at_index";`);
  }
}
