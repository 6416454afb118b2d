import { type AppError, ERROR_TABLE, type ErrorCode, isAppError } from '@notary/shared';
import { TRPCError } from '@trpc/server';

/**
 * The body of a service's error-mapping middleware (`t.middleware(async ({ next }) => mapAppError(await
 * next()))`): a failed call whose cause is an `AppError` is thrown again as a `TRPCError` with the error
 * table's tRPC code and the AppError's message, the AppError staying as `cause` (which the HTTP error mapping
 * and the error formatter read). A cause that is no `AppError` is first offered to `fromUnknown` (the service's
 * reading of a dependency's failure, as `HttpErrorOptions.fromUnknown`). Any other result is returned as it is.
 * @throws TRPCError as above.
 */
export function mapAppError<Result extends { ok: boolean; error?: { cause?: unknown } }>(
  result: Result,
  fromUnknown?: (error: unknown) => AppError | undefined,
): Result {
  const thrown = result.ok ? undefined : result.error?.cause;
  const cause = thrown === undefined || isAppError(thrown) ? thrown : (fromUnknown?.(thrown) ?? thrown);
  if (isAppError(cause)) {
    throw new TRPCError({ code: ERROR_TABLE[cause.code].trpc, message: cause.message, cause });
  }
  return result;
}

/** The `data` of every tRPC error of the platform's services: the error table's code and HTTP status. */
export interface TrpcErrorData {
  code: ErrorCode;
  httpStatus: number;
  path: string | undefined;
  /** The request fields at fault (the catalog's validation errors). */
  fields?: string[];
  /** Seconds to wait before retrying (RATE_LIMITED, a full queue). */
  retryAfterSeconds?: number;
  /** The refusal's facts as data (`AppError.details`), e.g. a retention hold's rule and legal basis. */
  details?: Record<string, unknown>;
}

/**
 * The `errorFormatter` of both services' tRPC (`initTrpc().create({ isDev: false, errorFormatter })`): the
 * same masking as the REST face. `toAppError` is the service's normalization (`httpErrors().toAppError`), so
 * an error that is not an `AppError` (a database error, a bug) becomes INTERNAL with the message "Internal
 * error": no SQL, no stack, no driver text ever reaches a client. Input validation keeps its message.
 */
export function formatTrpcError(toAppError: (error: unknown) => AppError) {
  return ({
    shape,
    error,
  }: {
    shape: { code: number; data: { path?: string | undefined } };
    error: TRPCError;
  }): { message: string; code: number; data: TrpcErrorData } => {
    const app = toAppError(error);
    const data: TrpcErrorData = { code: app.code, httpStatus: app.status, path: shape.data.path };
    if (app.fields) data.fields = app.fields;
    if (app.retryAfterSeconds !== undefined) data.retryAfterSeconds = app.retryAfterSeconds;
    if (app.details) data.details = app.details;
    return { message: app.code === 'INTERNAL' ? 'Internal error' : app.message, code: shape.code, data };
  };
}
