import { Migration } from '@mikro-orm/migrations';

export class Migration20261121091721 extends Migration {
  override name = 'Migration20261121091721';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "catalog_provider" ("slug" varchar(64) not null, "name" varchar(200) not null, "kind" varchar(64) not null, "base_url" varchar(2048) not null, "publisher_name" varchar(300) not null, "publisher_url" varchar(2048) not null, "license" varchar(200) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "sync_status" text not null default 'never', "last_sync_at" timestamptz null, "last_success_at" timestamptz null, "indicator_count" int not null default 0, "last_error" text null, "sync_progress" jsonb null, "sync_heartbeat_at" timestamptz null, "embedder_id" varchar(200) null, "catalog_version" int not null default 0, primary key ("slug"));`,
    );

    this.addSql(
      `create table "catalog_indicator" ("id" uuid not null, "provider_slug" varchar(64) not null, "indicator_id" varchar(200) not null, "name" text not null, "category_slug" varchar(200) not null, "category_name" text not null, "unit" text null, "description" text null, "search_text" text not null, "content_hash" varchar(64) not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `alter table "catalog_indicator" add constraint "catalog_indicator_provider_slug_indicator_id_unique" unique ("provider_slug", "indicator_id");`,
    );

    this.addSql(
      `create table "catalog_sync_run" ("id" uuid not null, "provider_slug" varchar(64) not null, "trigger" varchar(32) not null, "started_at" timestamptz not null, "finished_at" timestamptz null, "status" text not null, "stats" jsonb null, "error" text null, primary key ("id"));`,
    );
    this.addSql(
      `create index "catalog_sync_run_provider_slug_started_at_index" on "catalog_sync_run" ("provider_slug", "started_at");`,
    );

    this.addSql(
      `alter table "catalog_provider" add constraint "catalog_provider_sync_status_check" check ("sync_status" in ('never', 'running', 'ok', 'partial', 'failed'));`,
    );

    this.addSql(
      `alter table "catalog_indicator" add constraint "catalog_indicator_provider_slug_foreign" foreign key ("provider_slug") references "catalog_provider" ("slug") on delete cascade;`,
    );

    this.addSql(
      `alter table "catalog_sync_run" add constraint "catalog_sync_run_provider_slug_foreign" foreign key ("provider_slug") references "catalog_provider" ("slug") on delete cascade;`,
    );
    this.addSql(
      `alter table "catalog_sync_run" add constraint "catalog_sync_run_status_check" check ("status" in ('never', 'running', 'ok', 'partial', 'failed'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "catalog_indicator" drop constraint "catalog_indicator_provider_slug_foreign";`);
    this.addSql(`alter table "catalog_sync_run" drop constraint "catalog_sync_run_provider_slug_foreign";`);

    this.addSql(`drop table if exists "catalog_provider" cascade;`);
    this.addSql(`drop table if exists "catalog_indicator" cascade;`);
    this.addSql(`drop table if exists "catalog_sync_run" cascade;`);
  }
}
