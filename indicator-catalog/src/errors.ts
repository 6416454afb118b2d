import { ERROR_TABLE, type ErrorCode } from '@notary/shared';

export type { ErrorCode } from '@notary/shared';

/**
 * The one error type catalog code throws, with a code of the platform's error table (`@notary/shared`
 * ERROR_TABLE: code -> HTTP status -> tRPC code). REST bodies are `{message, code}`, plus `fields` (the
 * request fields at fault) on validation errors.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly fields: string[] | undefined;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; fields?: string[] }) {
    super(message, options);
    this.name = 'AppError';
    this.code = code;
    this.fields = options?.fields;
  }

  get status(): number {
    return ERROR_TABLE[this.code].status;
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
