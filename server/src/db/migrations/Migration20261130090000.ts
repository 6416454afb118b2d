import { Migration } from '@mikro-orm/migrations';

/**
 * Each anchoring batch anchors the transparency log's checkpoint beside its documents: the checkpoint the log had
 * signed when the batch was cut (its size, root and signed note) is the batch tree's last leaf, whose proof is
 * kept with it. Null for a batch cut before this, or while the log had no checkpoint.
 */
export class Migration20261130090000 extends Migration {
  override name = 'Migration20261130090000';

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "anchor_batch" add column "checkpoint_size" bigint null, add column "checkpoint_root" bytea null, add column "checkpoint_note" text null, add column "checkpoint_proof" jsonb null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(
      `alter table "anchor_batch" drop column "checkpoint_size", drop column "checkpoint_root", drop column "checkpoint_note", drop column "checkpoint_proof";`,
    );
  }
}
