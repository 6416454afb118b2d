import { Migration } from '@mikro-orm/migrations';

/**
 * Retention of a serventia's documents against deletion (docs/sharing.md, LGPD deletion; docs/operations.md,
 * Retention holds):
 * - `serventia`: the CNS and minimum retention an organization declares (one row per tenant, removed with it);
 *   `retention_years` null means permanent;
 * - `retention_hold_lift`: the operator's lifts of a hold (one document, or a whole tenant when `document_id`
 *   is null), with who, why and when;
 * - `retention_refusal`: every deletion refused because of a hold;
 * - `serventia_change`: the operator's changes of a serventia (a shorter retention, its removal).
 * The three audit tables have no foreign keys: they outlive the documents and tenants they name.
 */
export class Migration20261129080100 extends Migration {
  override name = 'Migration20261129080100';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "serventia" ("tenant_id" uuid not null, "cns" varchar(6) not null, "retention_years" int null, "declared_at" timestamptz not null, "declared_by" varchar(128) null, primary key ("tenant_id"));`,
    );
    this.addSql(`create index "serventia_cns_index" on "serventia" ("cns");`);
    this.addSql(
      `alter table "serventia" add constraint "serventia_tenant_id_foreign" foreign key ("tenant_id") references "tenant" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `create table "retention_hold_lift" ("id" uuid not null, "tenant_id" uuid not null, "document_id" uuid null, "document_serial" varchar(32) null, "operator" varchar(128) not null, "reason" varchar(500) not null, "lifted_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `create index "retention_hold_lift_document_id_index" on "retention_hold_lift" ("document_id");`,
    );
    this.addSql(
      `create index "retention_hold_lift_tenant_id_document_id_index" on "retention_hold_lift" ("tenant_id", "document_id");`,
    );
    this.addSql(
      `create table "retention_refusal" ("id" uuid not null, "tenant_id" uuid not null, "document_id" uuid null, "action" text check ("action" in ('lgpd_deletion', 'org_deletion', 'org_deletion_run')) not null, "rule" text check ("rule" in ('notarial_act', 'retention_period')) not null, "held_count" int null, "user_id" varchar(128) null, "role" text check ("role" in ('owner', 'admin', 'editor', 'reader')) null, "ip" varchar(64) null, "refused_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "retention_refusal_tenant_id_index" on "retention_refusal" ("tenant_id");`);
    this.addSql(`create index "retention_refusal_document_id_index" on "retention_refusal" ("document_id");`);
    this.addSql(
      `create table "serventia_change" ("id" uuid not null, "tenant_id" uuid not null, "action" text check ("action" in ('retention', 'remove')) not null, "cns" varchar(6) not null, "retention_years_before" int null, "retention_years_after" int null, "operator" varchar(128) not null, "reason" varchar(500) not null, "changed_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "serventia_change_tenant_id_index" on "serventia_change" ("tenant_id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "serventia_change" cascade;`);
    this.addSql(`drop table if exists "retention_refusal" cascade;`);
    this.addSql(`drop table if exists "retention_hold_lift" cascade;`);
    this.addSql(`drop table if exists "serventia" cascade;`);
  }
}
