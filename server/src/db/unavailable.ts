import { AppError } from '@notary/shared';

/** Seconds a client is told to wait while the database is away: a PostgreSQL restart takes a few. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * Socket errors of a connection that could not be made or was cut (Node's `errno` codes). The other
 * dependencies' adapters (object storage, TSA, RPC, Redis) turn their own into `AppError`s or fall back, so
 * one of these reaching the HTTP face is the database's.
 */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH']);

/**
 * PostgreSQL SQLSTATEs of a server going away or not yet back (PostgreSQL, Appendix A "Error Codes"): class 08
 * connection exception, 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 53300
 * too_many_connections.
 */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123]|53300)$/;

/** node-postgres' own messages for a connection lost or never had (they carry no code). */
const LOST_CONNECTION =
  /Connection terminated|not queryable|timeout exceeded when trying to connect|Connection ended unexpectedly/i;

/**
 * Reads a failure that is no `AppError` as the database being unavailable: a connection refused or cut, a
 * server shutting down or starting up (its SQLSTATE, through MikroORM's `DriverException`, which keeps the
 * driver's `code`, or pg-boss's plain pg errors), or node-postgres' lost-connection messages; the `cause`
 * chain and an `AggregateError`'s errors (a refused connection to each address) are searched.
 * @returns AppError SERVICE_UNAVAILABLE (503) with `retryAfterSeconds` 5, the original as `cause`; undefined
 *   for anything else (it stays INTERNAL).
 */
export function databaseUnavailable(error: unknown): AppError | undefined {
  if (!isUnavailable(error, 0)) return undefined;
  return new AppError(
    'SERVICE_UNAVAILABLE',
    `The database is unavailable (restarting or unreachable): try again in ${DATABASE_RETRY_AFTER_SECONDS} s`,
    { cause: error, retryAfterSeconds: DATABASE_RETRY_AFTER_SECONDS },
  );
}

function isUnavailable(error: unknown, depth: number): boolean {
  if (!(error instanceof Error) || depth > 5) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATE.test(code))) return true;
  if (LOST_CONNECTION.test(error.message)) return true;
  if (error instanceof AggregateError && error.errors.some((e) => isUnavailable(e, depth + 1))) return true;
  return isUnavailable(error.cause, depth + 1);
}
