import { Migration } from '@mikro-orm/migrations';

/** Per-tenant used-bytes counter of the storage quota. */
export class Migration20261126170200 extends Migration {
  override name = 'Migration20261126170200';

  override up(): void | Promise<void> {}

  override down(): void | Promise<void> {}
}
