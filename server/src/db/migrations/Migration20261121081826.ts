import { Migration } from '@mikro-orm/migrations';

export class Migration20261121081826 extends Migration {
  override name = 'Migration20261121081826';

  override up(): void | Promise<void> {
    this.addSql(`alter table "anchor_tx" add "refusals" int not null default 0;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "anchor_tx" drop column "refusals";`);
  }
}
