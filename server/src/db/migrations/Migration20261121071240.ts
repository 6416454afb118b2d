import { Migration } from '@mikro-orm/migrations';

export class Migration20261121071240 extends Migration {
  override name = 'Migration20261121071240';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "identity_webhook_delivery" ("id" varchar(128) not null, "type" varchar(128) not null, "received_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `create index "identity_webhook_delivery_received_at_index" on "identity_webhook_delivery" ("received_at");`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "identity_webhook_delivery" cascade;`);
  }
}
