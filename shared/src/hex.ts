/**
 * `h` in lower case without its `0x` prefix: `0xABcd` → `abcd` (transaction ids and Clarity buffers are spelled
 * both ways by the Stacks API and by users).
 */
export function stripHex(h: string): string {
  return h.toLowerCase().replace(/^0x/, '');
}

/**
 * A non-negative integer as lower-case hex of an even number of digits (whole bytes): `255n` → `ff`, `256n` →
 * `0100`. For certificate and timestamp serial numbers (RFC 5280 section 4.1.2.2, RFC 3161 section 2.4.2),
 * compared as written.
 */
export function evenHex(n: bigint): string {
  const hex = n.toString(16);
  return hex.length % 2 ? `0${hex}` : hex;
}
