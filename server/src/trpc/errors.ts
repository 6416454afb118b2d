import { httpErrors } from '@notary/platform/http/errors';
import { AppError } from '@notary/shared';
import type { ZodError } from 'zod';
import { databaseUnavailable } from '../db/unavailable';

/** Invalid input as BAD_REQUEST, the first issue in the message (`path: message`). */
function fromZod(error: ZodError): AppError {
  const first = error.issues[0];
  const where = first?.path.length ? `${first.path.join('.')}: ` : '';
  return new AppError('BAD_REQUEST', `${where}${first?.message ?? 'invalid input'}`, { cause: error });
}

/**
 * The service's error mapping (`@notary/platform` `httpErrors`), one for both faces: it lives beside the
 * procedures, whose error formatter reads `toAppError`, and the Express routes import it from here.
 * `toAppError` normalizes anything thrown, `sendError` writes the REST error body `{message, code}` with the
 * error table's status (spec, Errors: the service's AppErrors carry no `fields`), `errorAnswer` is that answer
 * for a caller that writes it itself, `errorHandler` is the Express last resort. INTERNAL errors are logged as
 * `internal error` through the request's logger (module `http`). The database away (PostgreSQL restarting or
 * unreachable) is 503 with `Retry-After` (`databaseUnavailable`), not INTERNAL.
 */
export const { toAppError, sendError, errorAnswer, errorHandler } = httpErrors({
  fromZod,
  fromUnknown: databaseUnavailable,
});
