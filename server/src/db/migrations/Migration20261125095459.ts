import { Migration } from '@mikro-orm/migrations';

export class Migration20261125095459 extends Migration {
  override name = 'Migration20261125095459';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "document_timestamp" ("id" uuid not null, "document_id" uuid not null, "token" bytea not null, "gen_time" timestamptz not null, "serial_number" varchar(80) not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `create index "document_timestamp_document_id_index" on "document_timestamp" ("document_id");`,
    );

    this.addSql(
      `alter table "document_timestamp" add constraint "document_timestamp_document_id_foreign" foreign key ("document_id") references "document" ("id") on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "document_timestamp" cascade;`);
  }
}
