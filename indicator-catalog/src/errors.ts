import { AppError } from '@notary/shared';

/** zod message of a missing (or blank) required field; `validationError` lists those fields as missing. */
export const REQUIRED = 'required';

/**
 * The catalog's BAD_REQUEST for invalid input (zod issues, or anything of their shape): a 400 `AppError` naming
 * every field at fault, `Missing required fields: baseUrl, license; invalid fields: publisherUrl (Invalid URL)`,
 * with `fields` listing them all (missing first); REST bodies and tRPC error data carry `fields`.
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
