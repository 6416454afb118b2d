import { Migration } from '@mikro-orm/migrations';

/**
 * Witnesses of the transparency log (docs/verify.md, Witnesses): `log_witness` (per witness of this log, the
 * tree size it last cosigned), `log_cosignature` (the cosignature lines collected, per checkpoint size and
 * witness, with the root cosigned) and `witness_log` (as a witness of other logs: the latest checkpoint cosigned per log origin).
 */
export class Migration20261129171500 extends Migration {
  override name = 'Migration20261129171500';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "log_witness" ("witness" text not null, "size" bigint not null, "updated_at" timestamptz not null, primary key ("witness"));`,
    );
    this.addSql(
      `create table "log_cosignature" ("size" bigint not null, "witness" text not null, "root" bytea not null, "line" text not null, "created_at" timestamptz not null, primary key ("size", "witness"));`,
    );
    this.addSql(
      `create table "witness_log" ("origin" text not null, "size" bigint not null, "root" bytea not null, "note" text not null, "updated_at" timestamptz not null, primary key ("origin"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "witness_log" cascade;`);
    this.addSql(`drop table if exists "log_cosignature" cascade;`);
    this.addSql(`drop table if exists "log_witness" cascade;`);
  }
}
