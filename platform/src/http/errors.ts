import { AppError, ERROR_TABLE, type ErrorBody, type ErrorCode, isAppError } from '@notary/shared';
import { TRPCError } from '@trpc/server';
import type { ErrorRequestHandler, Response } from 'express';
import { ZodError } from 'zod';
import { type Logger, silentLogger } from '../log';

/** A REST error body: `{message, code}`, plus `fields` when the `AppError` names the request fields at fault. */
export type RestErrorBody = ErrorBody & { fields?: string[] };

export interface HttpErrorOptions {
  /** The service's BAD_REQUEST for invalid input (its wording of zod's issues). */
  fromZod: (error: ZodError) => AppError;
  /**
   * The service's reading of a failure its own code did not turn into an `AppError` (a database connection
   * lost while PostgreSQL restarts): an `AppError` to answer instead of INTERNAL, or undefined to leave it
   * INTERNAL.
   */
  fromUnknown?: (error: unknown) => AppError | undefined;
}

/** An error answer as `sendError` writes it. */
export interface ErrorAnswer {
  status: number;
  headers: Record<string, string>;
  body: RestErrorBody;
}

/** The error mapping of one service's HTTP face. */
export interface HttpErrors {
  /**
   * Normalizes anything thrown into an `AppError`: `AppError`s as they are, zod validation through `fromZod`,
   * tRPC errors by code (their `AppError` or `ZodError` cause first), what `fromUnknown` recognizes as it says,
   * everything else INTERNAL with the message hidden (the original kept as `cause`).
   */
  toAppError(error: unknown): AppError;
  /**
   * Writes the REST error body (`RestErrorBody`) with the error table's status, and `Retry-After` when the
   * error knows the wait; logs INTERNAL errors. When the headers already went out (a failure mid-stream) the socket is destroyed instead.
   * The request id stays in the `X-Request-Id` header (`requestLogging`) and the log line, out of the body:
   * the spec's body is `{message, code}`, which clients compare whole.
   */
  sendError(res: Response, error: unknown): void;
  /**
   * What `sendError` would write for `error`, for a caller that writes the answer itself (an upload answered
   * before its body was read, whose connection closes only after a bounded drain): the status, the
   * `Retry-After` header when the error knows the wait, and the body. Logs INTERNAL errors as `sendError` does.
   */
  errorAnswer(res: Response, error: unknown): ErrorAnswer;
  /**
   * Express error middleware, the last resort: body-parser's 400 (malformed JSON) and 413 (too large) become
   * BAD_REQUEST and PAYLOAD_TOO_LARGE; never leaks a stack trace.
   */
  errorHandler: ErrorRequestHandler;
}

// GONE shares NOT_FOUND's tRPC code and INSUFFICIENT_STORAGE SERVICE_UNAVAILABLE's: a bare tRPC code maps
// back to the first of the two (an AppError cause keeps its own code).
// tRPC's own request errors (malformed input JSON, wrong method or content type) are the client's: 400.
const TRPC_TO_APP: Partial<Record<string, ErrorCode>> = {
  PARSE_ERROR: 'BAD_REQUEST',
  METHOD_NOT_SUPPORTED: 'BAD_REQUEST',
  UNSUPPORTED_MEDIA_TYPE: 'BAD_REQUEST',
  ...Object.fromEntries(
    Object.entries(ERROR_TABLE)
      .filter(([code]) => code !== 'GONE' && code !== 'INSUFFICIENT_STORAGE')
      .map(([code, row]) => [row.trpc, code as ErrorCode]),
  ),
};

/**
 * The error mapping of a service's HTTP face: REST bodies `{message, code}` with the status of the error table
 * (`ERROR_TABLE`); see `HttpErrors`. An INTERNAL error is logged as `internal error`, the cause as `err`, through
 * the request's logger (`req.log` of `requestLogging`: the line carries the request id and the module).
 */
export function httpErrors(options: HttpErrorOptions): HttpErrors {
  const toAppError = (error: unknown): AppError => {
    if (isAppError(error)) return error;
    if (error instanceof TRPCError) {
      if (isAppError(error.cause)) return error.cause;
      if (error.cause instanceof ZodError) return options.fromZod(error.cause);
      const known = error.cause === undefined ? undefined : options.fromUnknown?.(error.cause);
      if (known) return known;
      const code = TRPC_TO_APP[error.code] ?? 'INTERNAL';
      return new AppError(code, code === 'INTERNAL' ? 'Internal error' : error.message, { cause: error });
    }
    if (error instanceof ZodError) return options.fromZod(error);
    const known = options.fromUnknown?.(error);
    if (known) return known;
    return new AppError('INTERNAL', 'Internal error', { cause: error });
  };

  const errorAnswer = (res: Response, error: unknown): ErrorAnswer => {
    const app = toAppError(error);
    if (app.code === 'INTERNAL') {
      requestLog(res).error({ err: app.cause ?? app }, 'internal error');
    }
    const body: RestErrorBody = { message: app.message, code: app.code };
    const headers: Record<string, string> = {};
    if (app.fields) body.fields = app.fields;
    if (app.details) body.details = app.details;
    if (app.retryAfterSeconds !== undefined) {
      body.retryAfterSeconds = app.retryAfterSeconds;
      headers['Retry-After'] = String(app.retryAfterSeconds);
    }
    return { status: app.status, headers, body };
  };

  const sendError = (res: Response, error: unknown): void => {
    const answer = errorAnswer(res, error);
    if (res.headersSent) {
      res.destroy();
      return;
    }
    for (const [name, value] of Object.entries(answer.headers)) res.setHeader(name, value);
    res.status(answer.status).json(answer.body);
  };

  const errorHandler: ErrorRequestHandler = (err, _req, res, _next) => {
    // body-parser errors carry a status (400 malformed JSON, 413 too large).
    const status = (err as { status?: number }).status;
    if (status === 400) return sendError(res, new AppError('BAD_REQUEST', 'Malformed request body'));
    if (status === 413) return sendError(res, new AppError('PAYLOAD_TOO_LARGE', 'Request body too large'));
    sendError(res, err);
  };

  return { toAppError, sendError, errorAnswer, errorHandler };
}

/** The request's logger (`requestLogging`); an app without it (a bare test app) logs nothing. */
function requestLog(res: Response): Logger {
  // Typed as always there by requestLogging's augmentation of IncomingMessage, which holds only behind it.
  return (res.req as { log?: Logger } | undefined)?.log ?? silentLogger;
}
