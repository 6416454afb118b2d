import { Migration } from '@mikro-orm/migrations';

/**
 * Serial prefixes unique up to confusables: `tenant.serial_prefix_key` (`serialPrefixKey` of `@notary/shared`:
 * upper case, `O`→`0`, `I` and `L`→`1`) under a unique constraint.
 *
 * Existing tenants keep their prefix whatever happens: serials already issued name them. Where several
 * existing tenants share a key (two organizations whose slugs gave the same prefix, or confusable ones), the
 * oldest (`created_at`, then `id`) holds the key and the others keep a null key: they keep issuing serials
 * under their prefix as before, and no new tenant can take that prefix while its holder exists. Safe to run on
 * any data: no row is rewritten but the new column, nothing is refused.
 */
export class Migration20261126074617 extends Migration {
  override name = 'Migration20261126074617';

  override up(): void | Promise<void> {
    this.addSql(`alter table "tenant" add "serial_prefix_key" varchar(12) null;`);
    this.addSql(
      `update "tenant" set "serial_prefix_key" = k."key"
        from (select distinct on (translate(upper("serial_prefix"), 'OIL', '011'))
                     "id", translate(upper("serial_prefix"), 'OIL', '011') as "key"
                from "tenant"
               order by translate(upper("serial_prefix"), 'OIL', '011'), "created_at", "id") k
       where "tenant"."id" = k."id";`,
    );
    this.addSql(
      `alter table "tenant" add constraint "tenant_serial_prefix_key_unique" unique ("serial_prefix_key");`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "tenant" drop constraint "tenant_serial_prefix_key_unique";`);
    this.addSql(`alter table "tenant" drop column "serial_prefix_key";`);
  }
}
