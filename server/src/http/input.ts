import { AppError } from '@notary/shared';
import type { RequestHandler } from 'express';
import { sendError } from '../trpc/errors';

/** True when `value` (a parsed JSON body, a query object) holds a string with a NUL character anywhere. */
function holdsNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  // Bodies are at most 256 kB: the depth bound only stops a pathological nesting from recursing deeply.
  if (depth > 64 || value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some((v) => holdsNul(v, depth + 1));
  // Own enumerable keys, as `Object.entries` lists them, without its array of pairs (every request's query).
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    if (key.includes('\u0000') || holdsNul((value as Record<string, unknown>)[key], depth + 1)) return true;
  }
  return false;
}

/** A `/trpc` GET carries its input as JSON in `?input=`, where a NUL is escaped (`\u0000`): parse to see it. */
function trpcInputHoldsNul(query: unknown): boolean {
  const input = (query as { input?: unknown }).input;
  if (typeof input !== 'string' || !input.includes('\\u0000')) return false;
  try {
    return holdsNul(JSON.parse(input));
  } catch {
    return false;
  }
}

/**
 * 400 for a NUL character in the path, the query string or the JSON body: PostgreSQL text cannot hold one
 * (the driver's error would otherwise surface as a 500), and no field of the spec needs it. Runs after the
 * JSON parser, for both faces (`/trpc` inputs arrive in the query string or the body).
 */
export const rejectNulBytes: RequestHandler = (req, res, next) => {
  let path = req.path;
  try {
    // Without a `%` there is nothing to decode (and nothing to fail on).
    if (path.includes('%')) path = decodeURIComponent(path);
  } catch {
    sendError(res, new AppError('BAD_REQUEST', 'Malformed percent-encoding in the path'));
    return;
  }
  if (path.includes('\u0000') || holdsNul(req.query) || holdsNul(req.body) || trpcInputHoldsNul(req.query)) {
    sendError(res, new AppError('BAD_REQUEST', 'Text fields must not contain NUL characters'));
    return;
  }
  next();
};
