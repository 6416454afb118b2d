/**
 * Serial number prefixes (`<PREFIX>-<CODE>`, `SERIAL_PATTERN`): the part of a public serial that names its
 * tenant. A reader judges a serial by its prefix, so no tenant may take a prefix that reads like another
 * tenant's or like the service's own:
 *
 * - **Unique up to confusables.** Two prefixes are the same when their `serialPrefixKey` is: the key maps the
 *   letters that read as digits (`O`→`0`, `I`→`1`, `L`→`1`, the substitutions Crockford base32, the serial
 *   code's alphabet, makes when decoding), so `B0B` and `BOB`, `L1MA` and `LIMA` are one prefix. The database
 *   holds the key under a unique index.
 * - **Reserved for organizations** (`organizationPrefixReservation`): the personal-workspace form (`U` and 5
 *   Crockford characters, derived from a user id: an organization taking one would read as somebody's own
 *   workspace; the longer forms a workspace gets on a rare collision are not reserved, so that `UNICAMP` or
 *   `UMBRELLA` stay possible, and the database key keeps them apart), prefixes that read as the service itself (anything starting with `NOTARY`, the default
 *   `SERVICE_NAME`) and a few words that read as official (`RESERVED_SERIAL_PREFIXES`), all compared by key.
 *
 * Every rule is compared on keys, so a confusable spelling of a reserved or taken prefix is refused the same.
 */

/** The serial code's alphabet (Crockford base32: digits and letters without I, L, O, U). */
export const CROCKFORD_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * Prefixes no organization may take (compared by `serialPrefixKey`): words that read as the service, its
 * operator or an official stamp on a public serial. `NOTARY` is refused as a beginning too (`NOTARYBR`).
 */
export const RESERVED_SERIAL_PREFIXES: readonly string[] = [
  'ADMIN',
  'OFFICIAL',
  'OFICIAL',
  'ROOT',
  'SECURITY',
  'SERVICE',
  'SERVICO',
  'STAFF',
  'SUPPORT',
  'SUPORTE',
  'SYSTEM',
  'SISTEMA',
  'VERIFY',
  'VERIFIED',
  'VERIFICA',
];

/** Keys no organization prefix may start with: the service's own name. */
const RESERVED_BEGINNINGS: readonly string[] = ['NOTARY'];

/** Every personal-workspace prefix, on keys: `U` then 5 to 11 Crockford characters. */
const PERSONAL_FORM = /^U[0-9A-HJKMNP-TV-Z]{5,11}$/;
/** The form personal workspaces get (all but a rare few): `U` then exactly 5 Crockford characters. */
const PERSONAL_FORM_USUAL = /^U[0-9A-HJKMNP-TV-Z]{5}$/;

/**
 * The comparison key of a prefix: upper-cased, then `O`→`0`, `I`→`1`, `L`→`1`. Prefixes with the same key
 * read alike and count as the same prefix.
 */
export function serialPrefixKey(prefix: string): string {
  return prefix.toUpperCase().replace(/O/g, '0').replace(/[IL]/g, '1');
}

/**
 * The serial prefix an organization's slug gives: the slug upper-cased, letters and digits only, its first 8
 * characters; a slug with fewer than 2 of them gets `ORG` appended (`a` → `AORG`, then cut to 3: `AOR`).
 */
export function organizationSerialPrefix(slug: string): string {
  const cleaned = slug
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, '')
    .slice(0, 8);
  return cleaned.length >= 2 ? cleaned : `${cleaned}ORG`.slice(0, 3);
}

/**
 * True for a prefix with the shape of any personal workspace's (`U` and 5 to 11 Crockford characters), by key:
 * prefixes the service picks for an organization on its own avoid all of them.
 */
export function isPersonalSerialPrefixForm(prefix: string): boolean {
  return PERSONAL_FORM.test(serialPrefixKey(prefix));
}

/**
 * Why an organization may not take `prefix`, or `undefined` when it may: a sentence for the 400 answer
 * ("... reads as a personal workspace's", "... is reserved"). Compared by key (see the module comment).
 */
export function organizationPrefixReservation(prefix: string): string | undefined {
  const key = serialPrefixKey(prefix);
  if (PERSONAL_FORM_USUAL.test(key)) {
    return `the serial prefix ${prefix} has the form of a personal workspace's (U and 5 letters and digits)`;
  }
  if (RESERVED_BEGINNINGS.some((word) => key.startsWith(serialPrefixKey(word)))) {
    return `the serial prefix ${prefix} reads as the service's own`;
  }
  if (RESERVED_SERIAL_PREFIXES.some((word) => serialPrefixKey(word) === key)) {
    return `the serial prefix ${prefix} is reserved`;
  }
  return undefined;
}
