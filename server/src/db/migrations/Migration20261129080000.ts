import { Migration } from '@mikro-orm/migrations';

/**
 * Notarial acts beside documents (`domain/acts/`):
 * - `notarial_act`: at most one act per document (`document_id` unique), its type, MNE (canonical, unique
 *   across the service), selo (UF and code), book and page, who recorded it and when. Deleted with its
 *   document's row (an organization deletion); an LGPD deletion keeps it, as it keeps the hash;
 * - `notarial_act_history`: every record, change and removal of an act, with who, when and the act before and
 *   after (jsonb);
 * - the documents list's search by MNE and by selo code: prefix `LIKE` through `text_pattern_ops` b-trees,
 *   partial on the rows that have one (whatever the database's collation).
 */
export class Migration20261129080000 extends Migration {
  override name = 'Migration20261129080000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "notarial_act" ("id" uuid not null, "document_id" uuid not null, "tenant_id" uuid not null, "type" text not null, "mne" text null, "selo_state" text null, "selo_code" text null, "book" text null, "page" text null, "recorded_by" varchar(128) not null, "recorded_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `alter table "notarial_act" add constraint "notarial_act_document_id_unique" unique ("document_id");`,
    );
    this.addSql(`create index "notarial_act_tenant_id_index" on "notarial_act" ("tenant_id");`);
    this.addSql(`alter table "notarial_act" add constraint "notarial_act_mne_unique" unique ("mne");`);
    this.addSql(
      `create index "notarial_act_mne_pattern_index" on "notarial_act" ("mne" text_pattern_ops) where "mne" is not null;`,
    );
    this.addSql(
      `create index "notarial_act_selo_code_pattern_index" on "notarial_act" ("selo_code" text_pattern_ops) where "selo_code" is not null;`,
    );
    this.addSql(
      `alter table "notarial_act" add constraint "notarial_act_document_id_foreign" foreign key ("document_id") references "document" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "notarial_act" add constraint "notarial_act_tenant_id_foreign" foreign key ("tenant_id") references "tenant" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "notarial_act" add constraint "notarial_act_type_check" check ("type" in ('ata_notarial', 'autenticacao', 'procuracao', 'escritura', 'testamento', 'outro'));`,
    );

    this.addSql(
      `create table "notarial_act_history" ("id" uuid not null, "document_id" uuid not null, "tenant_id" uuid not null, "action" text not null, "before" jsonb null, "after" jsonb null, "actor_user_id" varchar(128) not null, "actor_email" varchar(254) null, "role" text not null, "ip" varchar(64) null, "at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(
      `create index "notarial_act_history_tenant_id_index" on "notarial_act_history" ("tenant_id");`,
    );
    this.addSql(
      `create index "notarial_act_history_document_id_at_index" on "notarial_act_history" ("document_id", "at");`,
    );
    this.addSql(
      `alter table "notarial_act_history" add constraint "notarial_act_history_document_id_foreign" foreign key ("document_id") references "document" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "notarial_act_history" add constraint "notarial_act_history_tenant_id_foreign" foreign key ("tenant_id") references "tenant" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "notarial_act_history" add constraint "notarial_act_history_action_check" check ("action" in ('recorded', 'changed', 'removed'));`,
    );
    this.addSql(
      `alter table "notarial_act_history" add constraint "notarial_act_history_role_check" check ("role" in ('owner', 'admin', 'editor', 'reader'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "notarial_act_history" cascade;`);
    this.addSql(`drop table if exists "notarial_act" cascade;`);
  }
}
