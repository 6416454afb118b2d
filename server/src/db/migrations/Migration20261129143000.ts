import { Migration } from '@mikro-orm/migrations';

/**
 * The requester of a web capture's ata notarial draft (docs/cartorios.md, Ata notarial of a web capture): one row
 * per document, removed with it and by its LGPD deletion.
 */
export class Migration20261129143000 extends Migration {
  override name = 'Migration20261129143000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "ata_request" ("document_id" uuid not null, "name" varchar(200) not null, "cpf" varchar(11) not null, "qualification" varchar(500) null, "email" varchar(254) null, "requested_by" varchar(128) not null, "requested_at" timestamptz not null, primary key ("document_id"));`,
    );
    this.addSql(
      `alter table "ata_request" add constraint "ata_request_document_id_foreign" foreign key ("document_id") references "document" ("id") on update cascade on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "ata_request" cascade;`);
  }
}
