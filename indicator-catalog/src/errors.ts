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

/** zod message of a missing (or blank) required field; `validationError` lists those fields as missing. */
export const REQUIRED = 'required';

/**
 * A 400 `AppError` naming every field at fault: `Missing required fields: baseUrl, license; invalid fields:
 * publisherUrl (Invalid URL)`, with `fields` listing them all (missing first).
 */
export function validationError(error: {
  issues: readonly { path: readonly PropertyKey[]; message: string }[];
}): AppError {
  const missing: string[] = [];
  const invalid: string[] = [];
  for (const issue of error.issues) {
    const field = issue.path.map(String).join('.') || 'input';
    if (issue.message === REQUIRED) {
      if (!missing.includes(field)) missing.push(field);
    } else if (!invalid.some((i) => i.startsWith(`${field} (`))) {
      invalid.push(`${field} (${issue.message})`);
    }
  }
  const parts: string[] = [];
  if (missing.length) parts.push(`Missing required fields: ${missing.join(', ')}`);
  if (invalid.length) parts.push(`invalid fields: ${invalid.join(', ')}`);
  const fields = [...missing, ...invalid.map((i) => i.slice(0, i.indexOf(' (')))];
  return new AppError('BAD_REQUEST', parts.join('; ') || 'Invalid input', { cause: error, fields });
}
