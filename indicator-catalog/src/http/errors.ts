import { httpErrors } from '@notary/platform/http/errors';
import { validationError } from '../errors';

/**
 * The catalog's error mapping (`@notary/platform` `httpErrors`): `toAppError` normalizes anything thrown (zod
 * validation as BAD_REQUEST naming every missing and invalid field), `sendError` writes the REST error body
 * `{message, code}` plus `fields` on validation errors with the table's status, `errorHandler` is the Express
 * last resort. INTERNAL errors are logged as `internal error` through the request's logger.
 */
export const { toAppError, sendError, errorHandler } = httpErrors({
  fromZod: validationError,
});
