import { ERROR_TABLE, type ErrorCode } from '@notary/shared';
import { TRPCError } from '@trpc/server';
import type { ErrorRequestHandler, Response } from 'express';
import { ZodError } from 'zod';
import { AppError, isAppError, validationError } from '../errors';

const TRPC_TO_APP: Partial<Record<string, ErrorCode>> = Object.fromEntries(
  Object.entries(ERROR_TABLE)
    .filter(([code]) => code !== 'GONE')
    .map(([code, row]) => [row.trpc, code as ErrorCode]),
);

/**
 * Normalizes anything thrown into an `AppError`: domain errors as they are, zod validation as BAD_REQUEST
 * naming every missing and invalid field, tRPC errors by code, everything else INTERNAL (message hidden).
 */
export function toAppError(error: unknown): AppError {
  if (isAppError(error)) return error;
  if (error instanceof TRPCError) {
    if (isAppError(error.cause)) return error.cause;
    if (error.cause instanceof ZodError) return validationError(error.cause);
    const code = TRPC_TO_APP[error.code] ?? 'INTERNAL';
    return new AppError(code, code === 'INTERNAL' ? 'Internal error' : error.message, { cause: error });
  }
  if (error instanceof ZodError) return validationError(error);
  return new AppError('INTERNAL', 'Internal error', { cause: error });
}

/** Writes the REST error body `{message, code}` (plus `fields` on validation errors) with the table's status. */
export function sendError(res: Response, error: unknown): void {
  const app = toAppError(error);
  if (app.code === 'INTERNAL') console.error('[catalog] internal error', app.cause ?? app);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res
    .status(app.status)
    .json({ message: app.message, code: app.code, ...(app.fields ? { fields: app.fields } : {}) });
}

/** Express error middleware: the last resort; never leaks a stack trace. */
export const errorHandler: ErrorRequestHandler = (err, _req, res, _next) => {
  // body-parser errors carry a status (400 malformed JSON, 413 too large).
  const status = (err as { status?: number }).status;
  if (status === 400) return sendError(res, new AppError('BAD_REQUEST', 'Malformed request body'));
  if (status === 413) return sendError(res, new AppError('PAYLOAD_TOO_LARGE', 'Request body too large'));
  sendError(res, err);
};
