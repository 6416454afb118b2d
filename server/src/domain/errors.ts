import { ERROR_TABLE, type ErrorCode } from '@notary/shared';

/**
 * The one error type domain code throws. The HTTP layer maps `code` to a status through `ERROR_TABLE`
 * (REST body `{message, code}`) and tRPC maps it to the table's tRPC code.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AppError';
    this.code = code;
  }

  get status(): number {
    return ERROR_TABLE[this.code].status;
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
