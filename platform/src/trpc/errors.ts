import { ERROR_TABLE, isAppError } from '@notary/shared';
import { TRPCError } from '@trpc/server';

/**
 * The body of a service's error-mapping middleware (`t.middleware(async ({ next }) => mapAppError(await
 * next()))`): a failed call whose cause is an `AppError` is thrown again as a `TRPCError` with the error
 * table's tRPC code and the AppError's message, the AppError staying as `cause` (which the HTTP error mapping
 * and the error formatter read). Any other result is returned as it is.
 * @throws TRPCError as above.
 */
export function mapAppError<Result extends { ok: boolean; error?: { cause?: unknown } }>(
  result: Result,
): Result {
  const cause = result.ok ? undefined : result.error?.cause;
  if (isAppError(cause)) {
    throw new TRPCError({ code: ERROR_TABLE[cause.code].trpc, message: cause.message, cause });
  }
  return result;
}
