import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';

/**
 * Rules of the organization deletion code (spec, Limits: "6 digits, valid about 10 minutes"), stored hashed (a read of
 * the database gives no usable code), single use, a few attempts. Durations in seconds.
 *
 * Brute force: a code is burnt after `maxAttempts` wrong guesses and a new one costs a request, limited to
 * `requestsPerWindow` per organization per `windowSeconds`. That is at most 5 x 5 = 25 guesses an hour out of
 * 10^6 codes: even guessing without pause, half the code space takes about 20,000 hours (over two years),
 * and every request mails a fresh code to the requester, which makes the attack visible. The attacker must
 * moreover hold the requester's own session (codes are bound to the member who asked for them).
 */
export const DELETION_CODE_RULES = {
  digits: 6,
  validSeconds: 10 * 60,
  maxAttempts: 5,
  requestsPerWindow: 5,
  windowSeconds: 60 * 60,
} as const;

/** A code: `digits` decimal digits, leading zeros kept. */
export const DELETION_CODE_PATTERN = /^\d{6}$/;

/** A fresh code, uniform over 000000..999999 (`crypto.randomInt` rejects biased draws, unlike `% 10^6`). */
export function newDeletionCode(): string {
  return randomInt(0, 10 ** DELETION_CODE_RULES.digits)
    .toString()
    .padStart(DELETION_CODE_RULES.digits, '0');
}

/**
 * The key that hashes deletion codes, derived from the service secret with HMAC-SHA256 under its own label
 * (domain separation: the same secret keys signed URLs and the identity provider).
 *
 * Why a keyed HMAC rather than scrypt: a 6-digit code has only 10^6 values, so any unkeyed hash, however slow,
 * is reversed offline from a database dump (scrypt at ~50 ms is ~14 CPU-hours for the whole space, minutes on
 * a few dozen cores, within the code's 10 minutes). With a key that never enters the database, a dump alone
 * reveals nothing, and checking a code costs microseconds instead of a slow KDF that an attacker could use
 * to tie up the server's threads.
 */
export function deletionCodeKey(secret: string): Buffer {
  return createHmac('sha256', secret).update('notary/org-deletion-code/v1').digest();
}

/** What a code hash is bound to: a hash copied to another row, tenant or member never matches. */
export interface DeletionCodeBinding {
  tenantId: string;
  /** The member who requested the code (the only one who can confirm it). */
  userId: string;
  /** When the code was issued: the same digits issued twice hash differently. */
  issuedAt: Date;
}

/** Hex HMAC-SHA256 (64 characters) of `code` under `key`, bound to `binding`. */
export function hashDeletionCode(key: Uint8Array, binding: DeletionCodeBinding, code: string): string {
  return createHmac('sha256', key)
    .update(['v1', binding.tenantId, binding.userId, String(binding.issuedAt.getTime()), code].join('\0'))
    .digest('hex');
}

/** Whether `code` hashes to `storedHash`, compared in constant time. */
export function deletionCodeMatches(
  key: Uint8Array,
  binding: DeletionCodeBinding,
  code: string,
  storedHash: string,
): boolean {
  const expected = Buffer.from(storedHash, 'hex');
  const actual = Buffer.from(hashDeletionCode(key, binding, code), 'hex');
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
