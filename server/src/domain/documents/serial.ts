import { randomBytes } from 'node:crypto';
import { toCrockford } from '../tenancy/resolve';

/**
 * A new serial number `<PREFIX>-<CODE>` (docs/api.md, Serial numbers): CODE is 10 Crockford base32 characters
 * from 50 random bits. Uniqueness across tenants is enforced by the database's unique index; the caller
 * retries on a collision (probability ~ n / 2^50).
 */
export function newSerialNumber(prefix: string): string {
  return `${prefix}-${toCrockford(randomBytes(7)).slice(0, 10)}`;
}
