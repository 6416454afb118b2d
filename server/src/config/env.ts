import { parseAllowList } from '@notary/platform/net/address-policy';
import { z } from 'zod';

/*
 * Building blocks of the configuration areas (`config/<area>.ts`): zod fields shared by several areas and the
 * error every cross-variable check throws. Nothing here reads `process.env`; `config.ts` does, once.
 */

/** A boolean variable: `1`/`true` or `0`/`false`; unset stays `undefined`. */
export const bool = z
  .enum(['0', '1', 'true', 'false'])
  .transform((v) => v === '1' || v === 'true')
  .optional();

/** A string variable where an empty value means unset. */
export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v));

/** The error a cross-variable check throws: `Invalid configuration:` and the line naming what to set. */
export function invalidConfig(line: string): Error {
  return new Error(`Invalid configuration:\n  ${line}`);
}

/** An http(s) URL usable as a base: no query, no fragment, no credentials. */
export function isBaseUrl(value: string): boolean {
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  return (
    (url.protocol === 'https:' || url.protocol === 'http:') &&
    url.search === '' &&
    url.hash === '' &&
    url.username === '' &&
    url.password === ''
  );
}

/** A comma-separated list of URLs, trimmed, without trailing slashes or empty entries. */
export function urlList(value: string): string[] {
  return value
    .split(',')
    .map((s) => stripSlash(s.trim()))
    .filter(Boolean);
}

/** `url` without trailing slashes. */
export function stripSlash(url: string): string {
  return url.replace(/\/+$/, '');
}

/** `NODE_ENV`: development (default), production or test. */
export const nodeEnv = z.enum(['development', 'production', 'test']).default('development');
export type NodeEnv = z.infer<typeof nodeEnv>;

/**
 * An allow-list variable (`CAPTURE_ALLOW_HOSTS`, `REVOCATION_ALLOW_HOSTS`): comma-separated host, host:port,
 * [IPv6]:port or CIDR entries, empty by default, checked with the address policy's own parser.
 */
export const allowListVariable = z
  .string()
  .default('')
  .refine((v) => {
    try {
      parseAllowList(v);
      return true;
    } catch {
      return false;
    }
  }, 'comma-separated host, host:port, [IPv6]:port or CIDR entries');
