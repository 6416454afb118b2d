import { Migration } from '@mikro-orm/migrations';

/**
 * Indexes for keyset paging and search of the documents list and the acervo feed, so that their cost stays
 * flat as a tenant's archive grows to millions of documents (docs/api.md, Documents list; Acervo feed):
 * - the list pages by `(created_at desc, id desc)` within a tenant: `(tenant_id, created_at, id)` read
 *   backwards replaces `(tenant_id, created_at)`, whose ties on `created_at` needed a sort;
 * - search (`q`): serial and hash prefixes through `varchar_pattern_ops` b-trees (a prefix `LIKE` whatever the
 *   database's collation; the hash one also serves the public verify's equality, so it replaces the plain
 *   hash index), the file name through a trigram GIN (`pg_trgm`, on PostgreSQL and on PGlite, which loads the
 *   extension), an IPFS import's CID through a partial b-tree on its `ipfs://` source URI;
 * - the acervo feed: published, non-deleted documents by `(published_at, created_at, id)`, a partial index
 *   that replaces `(tenant_id, published, published_at)`. A published document always has `published_at`
 *   (set by the publish route); rows that might lack it get their creation time, so the feed's keyset never
 *   compares a null.
 */
export class Migration20261126170100 extends Migration {
  override name = 'Migration20261126170100';

  override up(): void | Promise<void> {
    this.addSql(`create extension if not exists pg_trgm;`);
    this.addSql(
      `update "document" set "published_at" = "created_at" where "published" and "published_at" is null;`,
    );
    this.addSql(`drop index if exists "document_tenant_id_created_at_index";`);
    this.addSql(
      `create index "document_tenant_id_created_at_id_index" on "document" ("tenant_id", "created_at", "id");`,
    );
    this.addSql(`drop index if exists "document_sha256_hash_index";`);
    this.addSql(
      `create index "document_sha256_hash_pattern_index" on "document" ("sha256_hash" varchar_pattern_ops);`,
    );
    this.addSql(
      `create index "document_serial_number_pattern_index" on "document" ("serial_number" varchar_pattern_ops);`,
    );
    this.addSql(
      `create index "document_file_name_trgm_index" on "document" using gin ("file_name" gin_trgm_ops);`,
    );
    this.addSql(
      `create index "document_ipfs_source_uri_index" on "document" ("source_uri" text_pattern_ops) where "source_type" = 'ipfs';`,
    );
    this.addSql(`drop index if exists "document_tenant_id_published_published_at_index";`);
    this.addSql(
      `create index "document_acervo_index" on "document" ("tenant_id", "published_at", "created_at", "id") where "published" and "deleted_at" is null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "document_acervo_index";`);
    this.addSql(
      `create index "document_tenant_id_published_published_at_index" on "document" ("tenant_id", "published", "published_at");`,
    );
    this.addSql(`drop index if exists "document_ipfs_source_uri_index";`);
    this.addSql(`drop index if exists "document_file_name_trgm_index";`);
    this.addSql(`drop index if exists "document_serial_number_pattern_index";`);
    this.addSql(`drop index if exists "document_sha256_hash_pattern_index";`);
    this.addSql(`create index "document_sha256_hash_index" on "document" ("sha256_hash");`);
    this.addSql(`drop index if exists "document_tenant_id_created_at_id_index";`);
    this.addSql(
      `create index "document_tenant_id_created_at_index" on "document" ("tenant_id", "created_at");`,
    );
  }
}
