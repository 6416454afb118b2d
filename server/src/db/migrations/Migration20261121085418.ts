import { Migration } from '@mikro-orm/migrations';

export class Migration20261121085418 extends Migration {
  override name = 'Migration20261121085418';

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "anchor_tx" add "network" varchar(64) null, add "chain_id" bigint null, add "contract" varchar(160) null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(
      `alter table "anchor_tx" drop column "network", drop column "chain_id", drop column "contract";`,
    );
  }
}
