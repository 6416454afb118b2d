import { Migration } from '@mikro-orm/migrations';

export class Migration20261121071806 extends Migration {
  override name = 'Migration20261121071806';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "org_deletion" ("id" uuid not null, "tenant_id" uuid not null, "requested_by" varchar(128) null, "lang" text not null default 'pt', "code_hash" varchar(64) null, "code_issued_at" timestamptz null, "code_expires_at" timestamptz null, "failed_attempts" int not null default 0, "code_consumed_at" timestamptz null, "request_window_start" timestamptz null, "requests_in_window" int not null default 0, "started_at" timestamptz null, "notice_recipients" jsonb null, "files_deleted_at" timestamptz null, "notices_sent_at" timestamptz null, "provider_deleted_at" timestamptz null, "lease_until" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `alter table "org_deletion" add constraint "org_deletion_tenant_id_unique" unique ("tenant_id");`,
    );

    this.addSql(
      `alter table "org_deletion" add constraint "org_deletion_tenant_id_foreign" foreign key ("tenant_id") references "tenant" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "org_deletion" add constraint "org_deletion_lang_check" check ("lang" in ('pt', 'en'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "org_deletion" cascade;`);
  }
}
