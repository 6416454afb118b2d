import { Migration } from '@mikro-orm/migrations';

/**
 * The tabelião's deferred signatures (docs/certificates.md, The tabelião's own signature): one row per prepared
 * signing session, bound to its document (removed with it) and to the member who prepared it; a restart between
 * preparing and completing loses nothing.
 */
export class Migration20261129140000 extends Migration {
  override name = 'Migration20261129140000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "notary_signature_session" ("id" uuid not null, "document_id" uuid not null, "user_id" varchar(128) not null, "policy" text check ("policy" in ('icp-brasil-ad-rb', 'icp-brasil-ad-rt')) not null, "certificates" jsonb not null, "signed_attributes" bytea not null, "prepared_pdf" bytea not null, "created_at" timestamptz not null, "expires_at" timestamptz not null, "completed_at" timestamptz null, "signed_pdf" bytea null, "signed_pdf_sha256" varchar(64) null, "level" varchar(8) null, primary key ("id"));`,
    );
    this.addSql(
      `create index "notary_signature_session_document_id_index" on "notary_signature_session" ("document_id");`,
    );
    this.addSql(
      `alter table "notary_signature_session" add constraint "notary_signature_session_document_id_foreign" foreign key ("document_id") references "document" ("id") on update cascade on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "notary_signature_session" cascade;`);
  }
}
