import { Migration } from '@mikro-orm/migrations';

/**
 * Each anchoring batch anchors the transparency log's checkpoint beside its documents: the checkpoint the log had
 * signed when the batch was cut (its size, root and signed note) is the batch tree's last leaf, whose proof is
 * kept with it. Null for a batch cut before this, or while the log had no checkpoint. A partial index finds the
 * newest anchored one (`GET /log/anchored`).
 */
export class Migration20261130090000 extends Migration {
  override name = 'Migration20261130090000';

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "anchor_batch" add column "checkpoint_size" bigint null, add column "checkpoint_root" bytea null, add column "checkpoint_note" text null, add column "checkpoint_proof" jsonb null;`,
    );
    // `GET /log/anchored` reads the newest anchored checkpoint: one index entry, however many batches there are.
    this.addSql(
      `create index "anchor_batch_anchored_checkpoint_index" on "anchor_batch" ("checkpoint_size" desc, "created_at" desc) where "status" = 'anchored' and "checkpoint_size" is not null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "anchor_batch_anchored_checkpoint_index";`);
    this.addSql(
      `alter table "anchor_batch" drop column "checkpoint_size", drop column "checkpoint_root", drop column "checkpoint_note", drop column "checkpoint_proof";`,
    );
  }
}
