import { errorMessage } from '@notary/shared';
/**
 * The client's one error type. Every failure the UI can meet (server down, session expired, 403 role, 413 too
 * large, 429 rate limited, a refused IPC payload...) becomes a `ClientError` with a `kind` the renderer turns
 * into a sentence in Portuguese or English. It is plain data (`toJSON`) so it crosses the Electron IPC
 * boundary, where only structured-clonable values survive.
 *
 * Platform-neutral: runs in Electron's main process (Node), in the preload and in the browser.
 */

export const ERROR_KINDS = [
  'offline', // the server could not be reached (connection refused, DNS, TLS, timeout)
  'not-signed-in', // no session at all
  'session-expired', // there was a session and the server no longer accepts it
  'invalid-code', // wrong or expired e-mail code
  'too-many-attempts', // e-mail code burnt after 3 wrong tries
  'origin', // the server refuses this page's origin (ALLOWED_ORIGINS / PUBLIC_URL)
  'forbidden', // 403: role too low, or a document of another tenant
  'not-found', // 404
  'gone', // 410: LGPD-deleted, invitation used
  'too-large', // 413: over 250 MB
  'rate-limited', // 429
  'bad-request', // 400
  'unavailable', // 503 (e.g. no TSA configured), 507 (the server's disk is nearly full)
  'bad-gateway', // 502 (e.g. TSA unreachable)
  'server', // 500 or an answer we cannot read
  'cancelled', // the user cancelled (upload, hashing, save dialog)
  'invalid-input', // an IPC payload refused by validation in main
  'file', // a local file could not be read
  'invalid-content', // the server sent a file that is not what was asked for (not a PDF, not DER): not saved
  'insecure-url', // a server URL with plain http beyond loopback: the session token would travel in clear
  'signing', // the tabelião's token or A1 file refused to sign: `message` is the sentence for the person
] as const;
export type ErrorKind = (typeof ERROR_KINDS)[number];

/** What crosses IPC and what the renderer shows. `message` is the server's (English) detail, if any. */
export interface ClientErrorData {
  kind: ErrorKind;
  message: string;
  /** HTTP status when the error came from the server. */
  status?: number;
  /** Seconds to wait before retrying (429), from `Retry-After` / `X-Retry-After` or the body's `retryAfterSeconds`. */
  retryAfterSeconds?: number;
}

export class ClientError extends Error implements ClientErrorData {
  readonly kind: ErrorKind;
  readonly status?: number;
  readonly retryAfterSeconds?: number;

  constructor(data: ClientErrorData, options?: { cause?: unknown }) {
    super(data.message, options);
    this.name = 'ClientError';
    this.kind = data.kind;
    if (data.status !== undefined) this.status = data.status;
    if (data.retryAfterSeconds !== undefined) this.retryAfterSeconds = data.retryAfterSeconds;
  }

  toJSON(): ClientErrorData {
    return {
      kind: this.kind,
      message: this.message,
      ...(this.status !== undefined ? { status: this.status } : {}),
      ...(this.retryAfterSeconds !== undefined ? { retryAfterSeconds: this.retryAfterSeconds } : {}),
    };
  }
}

export function isClientError(e: unknown): e is ClientError {
  return e instanceof ClientError;
}

/** Rebuilds a `ClientError` from its plain data (after IPC); unknown kinds become `server`. */
export function clientErrorFrom(data: unknown): ClientError {
  if (typeof data === 'object' && data !== null) {
    const d = data as Partial<Record<keyof ClientErrorData, unknown>>;
    const kind = (ERROR_KINDS as readonly string[]).includes(String(d.kind))
      ? (d.kind as ErrorKind)
      : 'server';
    return new ClientError({
      kind,
      message: typeof d.message === 'string' ? d.message : 'Unknown error',
      ...(typeof d.status === 'number' ? { status: d.status } : {}),
      ...(typeof d.retryAfterSeconds === 'number' ? { retryAfterSeconds: d.retryAfterSeconds } : {}),
    });
  }
  return new ClientError({ kind: 'server', message: String(data) });
}

/** Kind of an HTTP error status (the server's error table, `shared/src/errors.ts`). */
export function kindForStatus(status: number, code?: string): ErrorKind {
  if (code === 'INVALID_OTP' || code === 'OTP_EXPIRED' || code === 'INVALID_OTP_CODE') return 'invalid-code';
  if (code === 'TOO_MANY_ATTEMPTS') return 'too-many-attempts';
  if (code === 'INVALID_ORIGIN' || code === 'MISSING_OR_NULL_ORIGIN') return 'origin';
  switch (status) {
    case 400:
      return 'bad-request';
    case 401:
      return 'session-expired';
    case 403:
      return 'forbidden';
    case 404:
      return 'not-found';
    case 410:
      return 'gone';
    case 413:
      return 'too-large';
    case 429:
      return 'rate-limited';
    case 502:
    case 504:
      return 'bad-gateway';
    case 503:
    case 507: // the server's disk is below its floor: no new files for now, try again later
      return 'unavailable';
    default:
      return 'server';
  }
}

/** `Retry-After` (seconds or an HTTP date) or better-auth's `X-Retry-After`, in whole seconds. */
export function retryAfterFrom(
  headers: { get(name: string): string | null } | undefined,
): number | undefined {
  const raw = headers?.get('retry-after') ?? headers?.get('x-retry-after') ?? null;
  if (raw === null) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

/**
 * The wait of an error body, in whole seconds: `retryAfterSeconds` of a REST body (`{message, code:
 * "RATE_LIMITED", retryAfterSeconds}`) or of a tRPC error's `data` (platform/src/http/errors.ts,
 * platform/src/trpc/errors.ts). Undefined when absent or not a finite number of seconds.
 */
export function retryAfterFromBody(body: unknown): number | undefined {
  const value =
    typeof body === 'object' && body !== null
      ? (body as { retryAfterSeconds?: unknown }).retryAfterSeconds
      : undefined;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.ceil(value) : undefined;
}

/**
 * The error of an HTTP answer that is not 2xx, from its status and body. The service's bodies are
 * `{message, code}` (REST and better-auth alike); anything else keeps the status only. A 429 keeps the wait:
 * `Retry-After` (RFC 9110, section 10.2.3), else the body's `retryAfterSeconds`.
 */
export function errorFromResponse(
  status: number,
  body: unknown,
  headers?: { get(name: string): string | null },
): ClientError {
  const b = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const code = typeof b.code === 'string' ? b.code : undefined;
  const message =
    typeof b.message === 'string' && b.message ? b.message : `The server answered HTTP ${status}`;
  const kind = /Origin .* is not allowed/.test(message) ? 'origin' : kindForStatus(status, code);
  const retryAfterSeconds =
    status === 429 ? (retryAfterFrom(headers) ?? retryAfterFromBody(body)) : undefined;
  return new ClientError({
    kind,
    message,
    status,
    ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
  });
}

/** A failed `fetch` (no answer at all): the server is down or unreachable. */
export function offlineError(url: string, cause: unknown): ClientError {
  const detail =
    cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : '';
  return new ClientError(
    { kind: 'offline', message: `Could not reach ${url}${detail ? ` (${detail})` : ''}` },
    { cause },
  );
}

/** True for errors a `fetch` throws when no HTTP answer arrived (Node: "fetch failed", browsers: TypeError). */
export function isNetworkFailure(e: unknown): boolean {
  return (
    e instanceof TypeError || (e instanceof Error && /fetch failed|network|ECONNREFUSED/i.test(e.message))
  );
}

/** Anything thrown, as a `ClientError` (unknown errors become `server` with their message). */
export function toClientError(e: unknown): ClientError {
  if (isClientError(e)) return e;
  if (e instanceof Error && e.name === 'AbortError')
    return new ClientError({ kind: 'cancelled', message: 'Cancelled' });
  return new ClientError({ kind: 'server', message: errorMessage(e) }, { cause: e });
}
