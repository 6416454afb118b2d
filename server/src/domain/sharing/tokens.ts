import { randomBytes } from 'node:crypto';

/**
 * Opaque bearer tokens (share links, acervo tokens): 32 random bytes in base64url (43 characters), stored
 * only as their SHA-256 (hex). With 256 bits of entropy a plain hash is enough: there is nothing to brute
 * force, and a lookup by hash leaks nothing usable through timing.
 */
export function newOpaqueToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The shape of `newOpaqueToken()`: anything else is rejected before the database is asked. */
export const OPAQUE_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
