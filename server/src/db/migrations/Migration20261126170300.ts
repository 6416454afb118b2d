import { Migration } from '@mikro-orm/migrations';

/** Progress of organization deletions, so a deletion resumes where it stopped. */
export class Migration20261126170300 extends Migration {
  override name = 'Migration20261126170300';

  override up(): void | Promise<void> {}

  override down(): void | Promise<void> {}
}
