import { Migration } from '@mikro-orm/migrations';

/**
 * Progress of organization deletions, so a deletion resumes where it stopped and an operator can follow it
 * (`org:deletion-status`), and the indexes that keep the walks over a large archive flat:
 * - `org_deletion`: `documents_total` (the tenant's documents when the deletion reached them), and, moved in
 *   the transaction that deletes each batch's rows, `documents_deleted`, `batches_done`, `document_cursor`
 *   (the greatest document id deleted: the next batch starts after it) and `progress_at`;
 * - `document (tenant_id, id)`: a deletion's batches read the next ids of the tenant after the cursor, one
 *   index range each, instead of sorting the tenant's rows (or walking the dead entries of the batches already
 *   deleted) every time;
 * - `document (storage_key)` and `(screenshot_key)`, partial on live rows: the orphan sweep asks, per page of
 *   listed objects, which keys a live document names, one index probe per key instead of a scan of the table.
 */
export class Migration20261126170300 extends Migration {
  override name = 'Migration20261126170300';

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "org_deletion" add column "documents_total" int null, add column "documents_deleted" int not null default 0, add column "batches_done" int not null default 0, add column "document_cursor" uuid null, add column "progress_at" timestamptz null;`,
    );
    this.addSql(`create index "document_tenant_id_id_index" on "document" ("tenant_id", "id");`);
    this.addSql(
      `create index "document_storage_key_live_index" on "document" ("storage_key") where "deleted_at" is null and "storage_key" is not null;`,
    );
    this.addSql(
      `create index "document_screenshot_key_live_index" on "document" ("screenshot_key") where "deleted_at" is null and "screenshot_key" is not null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "document_screenshot_key_live_index";`);
    this.addSql(`drop index if exists "document_storage_key_live_index";`);
    this.addSql(`drop index if exists "document_tenant_id_id_index";`);
    this.addSql(
      `alter table "org_deletion" drop column "documents_total", drop column "documents_deleted", drop column "batches_done", drop column "document_cursor", drop column "progress_at";`,
    );
  }
}
