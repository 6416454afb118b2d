import { AppError } from '@notary/shared';
import { create as createContentDisposition } from 'content-disposition';
import type { Disposition, PresignOptions } from '../../ports/storage';

/** Longest key accepted, in bytes (S3 allows 1024; keys are ASCII so characters = bytes). */
export const MAX_KEY_LENGTH = 1024;

/**
 * Longest validity of a presigned URL, in seconds: 7 days, the SigV4 query-string maximum
 * (https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html). The fs adapter keeps the
 * same bound so both adapters accept the same options.
 */
export const MAX_PRESIGN_SECONDS = 7 * 24 * 3600;

const KEY_SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

/**
 * Throws `AppError('BAD_REQUEST')` unless `key` is a relative slash-separated path of segments made of
 * `[A-Za-z0-9_.-]`, none empty and none starting with `.` (so no `.`/`..` traversal and no hidden names, which
 * the fs adapter reserves for its temp directory), at most `MAX_KEY_LENGTH` characters.
 */
export function assertValidKey(key: string): void {
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || !key.split('/').every((s) => KEY_SEGMENT.test(s))) {
    throw new AppError('BAD_REQUEST', `Invalid object key: ${JSON.stringify(key.slice(0, 100))}`);
  }
}

/**
 * Throws `AppError('BAD_REQUEST')` unless `prefix` is empty or made of key characters (`[A-Za-z0-9/_.-]`) with
 * no segment that is `.`/`..`-like (a segment starting with `.`) before its last `/`.
 */
export function assertValidPrefix(prefix: string): void {
  if (prefix === '') return;
  const segments = prefix.split('/');
  const last = segments.pop() ?? '';
  const ok =
    prefix.length <= MAX_KEY_LENGTH &&
    !prefix.startsWith('/') &&
    segments.every((s) => KEY_SEGMENT.test(s)) &&
    /^[A-Za-z0-9_.-]*$/.test(last);
  if (!ok) throw new AppError('BAD_REQUEST', `Invalid key prefix: ${JSON.stringify(prefix.slice(0, 100))}`);
}

/**
 * Longest file name accepted for a presigned URL, in Unicode code points (what the upload route keeps). Bounds
 * the URL and the `Content-Disposition` header (at most ~3 KB once percent-encoded as UTF-8).
 */
export const MAX_FILE_NAME_CODE_POINTS = 255;

// A media type as printable ASCII `type/subtype` with optional parameters: it ends up verbatim in a response
// header, so control characters (header injection) must never pass.
const MEDIA_TYPE = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;[\x20-\x7e]*)?$/;

// biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point.
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Validates presign options shared by both adapters.
 * @throws AppError('BAD_REQUEST') when `expiresInSeconds` is not an integer in 1..604800, `contentType` is not a
 *   printable-ASCII media type of at most 255 characters, `disposition` is not inline/attachment, or
 *   `fileName` is empty, longer than `MAX_FILE_NAME_CODE_POINTS` or contains control characters.
 */
export function assertValidPresignOptions(options: PresignOptions): void {
  const { expiresInSeconds, contentType, disposition, fileName } = options;
  if (!Number.isInteger(expiresInSeconds) || expiresInSeconds < 1 || expiresInSeconds > MAX_PRESIGN_SECONDS) {
    throw new AppError('BAD_REQUEST', `expiresInSeconds must be an integer in 1..${MAX_PRESIGN_SECONDS}`);
  }
  if (contentType.length > 255 || !MEDIA_TYPE.test(contentType)) {
    throw new AppError('BAD_REQUEST', 'Invalid content type');
  }
  if (disposition !== 'inline' && disposition !== 'attachment') {
    throw new AppError('BAD_REQUEST', 'Invalid disposition');
  }
  if (fileName.length === 0 || [...fileName].length > MAX_FILE_NAME_CODE_POINTS || CONTROL.test(fileName)) {
    throw new AppError('BAD_REQUEST', 'Invalid file name');
  }
}

/**
 * The `Content-Disposition` header value for `fileName` (RFC 6266 section 4.3): `filename="..."` with an ASCII
 * fallback (accents stripped, other non-ASCII characters as `_`) and, when the name is not plain ASCII, an
 * RFC 8187 `filename*=UTF-8''...` parameter carrying the exact Unicode name, which browsers prefer.
 * Always pure ASCII, so it is safe in any HTTP header and in an S3 `response-content-disposition` parameter. Example: `relatório – 日本.pdf` gives
 * `inline; filename="relatorio _ __.pdf"; filename*=UTF-8''relat%C3%B3rio%20%E2%80%93%20%E6%97%A5%E6%9C%AC.pdf`.
 */
export function contentDispositionHeader(disposition: Disposition, fileName: string): string {
  const fallback = fileName
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^\x20-\x7e]/g, '_');
  return createContentDisposition(fileName, { type: disposition, fallback });
}

/** The abort reason of `signal`, or a standard `AbortError` when it has none. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted', 'AbortError');
}
