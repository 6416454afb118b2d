import { Migration } from '@mikro-orm/migrations';

/**
 * Monitorings (the certidão de permanência, docs/api.md, Monitoring): `monitor`, one per monitored URL with its
 * schedule and state, and `monitor_run`, one row per run, unique by `(monitor_id, run)` so that a run delivered
 * twice by the job queue is recorded once.
 */
export class Migration20261129142419 extends Migration {
  override name = 'Migration20261129142419';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "monitor" ("id" uuid not null, "tenant_id" uuid not null, "created_by" varchar(128) not null, "created_by_email" varchar(254) null, "url" text not null, "interval" varchar(32) not null, "period" varchar(32) not null, "interval_seconds" int not null, "period_seconds" int not null, "planned_runs" int not null, "state" text not null, "failure" text null, "consent_at" timestamptz not null, "created_at" timestamptz not null, "starts_at" timestamptz not null, "ends_at" timestamptz not null, "ended_at" timestamptz null, "certidao_id" uuid null, primary key ("id"));`,
    );
    this.addSql(`create index "monitor_tenant_id_index" on "monitor" ("tenant_id");`);

    this.addSql(
      `create table "monitor_run" ("id" uuid not null, "monitor_id" uuid not null, "run" int not null, "due_at" timestamptz not null, "observed_at" timestamptz not null, "outcome" text not null, "cause" text null, "detail" text null, "http_status" int null, "document_id" uuid null, "serial_number" varchar(32) null, "wacz_sha256" varchar(64) null, "previous_wacz_sha256" varchar(64) null, primary key ("id"));`,
    );
    this.addSql(
      `alter table "monitor_run" add constraint "monitor_run_monitor_id_run_unique" unique ("monitor_id", "run");`,
    );

    this.addSql(
      `alter table "monitor" add constraint "monitor_tenant_id_foreign" foreign key ("tenant_id") references "tenant" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "monitor" add constraint "monitor_certidao_id_foreign" foreign key ("certidao_id") references "document" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "monitor" add constraint "monitor_state_check" check ("state" in ('active', 'finished', 'cancelled', 'failed'));`,
    );

    this.addSql(
      `alter table "monitor_run" add constraint "monitor_run_monitor_id_foreign" foreign key ("monitor_id") references "monitor" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "monitor_run" add constraint "monitor_run_document_id_foreign" foreign key ("document_id") references "document" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "monitor_run" add constraint "monitor_run_outcome_check" check ("outcome" in ('seen', 'unavailable'));`,
    );
    this.addSql(
      `alter table "monitor_run" add constraint "monitor_run_cause_check" check ("cause" in ('dns', 'tls', 'http-status', 'timeout', 'unreachable', 'refused', 'error'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "monitor_run" drop constraint "monitor_run_monitor_id_foreign";`);

    this.addSql(`drop table if exists "monitor" cascade;`);
    this.addSql(`drop table if exists "monitor_run" cascade;`);
  }
}
