import { Migration } from '@mikro-orm/migrations';

/**
 * Per-tenant used-bytes counter of the storage quota: `tenant_storage.used_bytes`, the sum of `file_size`
 * over the tenant's live documents with stored bytes (`deleted_at is null and storage_key is not null`), so an
 * upload reads one row instead of summing over the whole archive (`domain/documents/quota.ts`). Backfilled
 * here from the rows, one row per existing tenant (0 for a tenant without stored files), in the migration's
 * transaction: the counter starts equal to the sum it replaces.
 */
export class Migration20261126170200 extends Migration {
  override name = 'Migration20261126170200';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "tenant_storage" ("tenant_id" uuid not null, "used_bytes" bigint not null, "updated_at" timestamptz not null, primary key ("tenant_id"));`,
    );
    this.addSql(
      `alter table "tenant_storage" add constraint "tenant_storage_tenant_id_foreign" foreign key ("tenant_id") references "tenant" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `insert into "tenant_storage" ("tenant_id", "used_bytes", "updated_at")
       select t."id", coalesce(s."used", 0), now()
         from "tenant" t
         left join (select "tenant_id", sum("file_size") as "used" from "document"
                     where "deleted_at" is null and "storage_key" is not null
                     group by "tenant_id") s on s."tenant_id" = t."id";`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "tenant_storage" cascade;`);
  }
}
