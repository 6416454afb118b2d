/**
 * The one error table of the platform: every error code with its HTTP status and tRPC code. REST error bodies are
 * `{ message, code }` (the spec leaves their shape open but for a few messages); statuses follow the spec's Errors
 * section.
 */
export const ERROR_TABLE = {
  BAD_REQUEST: { status: 400, trpc: 'BAD_REQUEST' },
  UNAUTHENTICATED: { status: 401, trpc: 'UNAUTHORIZED' },
  FORBIDDEN: { status: 403, trpc: 'FORBIDDEN' },
  NOT_FOUND: { status: 404, trpc: 'NOT_FOUND' },
  CONFLICT: { status: 409, trpc: 'CONFLICT' },
  GONE: { status: 410, trpc: 'NOT_FOUND' },
  PAYLOAD_TOO_LARGE: { status: 413, trpc: 'PAYLOAD_TOO_LARGE' },
  RATE_LIMITED: { status: 429, trpc: 'TOO_MANY_REQUESTS' },
  INTERNAL: { status: 500, trpc: 'INTERNAL_SERVER_ERROR' },
  NOT_IMPLEMENTED: { status: 501, trpc: 'NOT_IMPLEMENTED' },
  BAD_GATEWAY: { status: 502, trpc: 'BAD_GATEWAY' },
  SERVICE_UNAVAILABLE: { status: 503, trpc: 'SERVICE_UNAVAILABLE' },
  GATEWAY_TIMEOUT: { status: 504, trpc: 'GATEWAY_TIMEOUT' },
  // RFC 4918 section 11.5: the server cannot store what the request brings (its disk is near full). tRPC has
  // no such code: its nearest, 503, on the tRPC face; REST answers 507.
  INSUFFICIENT_STORAGE: { status: 507, trpc: 'SERVICE_UNAVAILABLE' },
} as const;

export type ErrorCode = keyof typeof ERROR_TABLE;

/** Body of every REST error response. */
export interface ErrorBody {
  message: string;
  code: ErrorCode;
  /** Seconds to wait before retrying (429 and 503 answers that know it); also the `Retry-After` header. */
  retryAfterSeconds?: number;
  /** Facts of the refusal as data (e.g. the retention rule and legal basis of a refused deletion). */
  details?: Record<string, unknown>;
}

/**
 * The one error type the services' own code throws: a code of `ERROR_TABLE`, a message meant for the caller,
 * and optionally the request fields at fault (`fields`, the indicator catalog's validation errors). The HTTP
 * layer maps `code` to the table's status (REST body `{message, code}`, plus `fields` when set) and tRPC to the
 * table's tRPC code. Plain ECMAScript, so it lives here beside the table (this package also runs in browsers).
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  /** The request fields at fault (validation errors); undefined when the error is not about fields. */
  readonly fields: string[] | undefined;
  /**
   * Seconds after which the same request may succeed (RATE_LIMITED, a full queue): the HTTP faces send it as
   * `Retry-After` (RFC 9110 section 10.2.3) and in the body as `retryAfterSeconds`.
   */
  readonly retryAfterSeconds: number | undefined;
  /**
   * Facts of the refusal as data, for clients that act on them (REST body `details`, tRPC `data.details`):
   * e.g. a deletion refused under a retention rule carries the rule, until when and the legal basis.
   */
  readonly details: Record<string, unknown> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options?: {
      cause?: unknown;
      fields?: string[];
      retryAfterSeconds?: number;
      details?: Record<string, unknown>;
    },
  ) {
    super(message, options);
    this.name = 'AppError';
    this.code = code;
    this.fields = options?.fields;
    this.retryAfterSeconds = options?.retryAfterSeconds;
    this.details = options?.details;
  }

  /** The HTTP status of `code` in `ERROR_TABLE`. */
  get status(): number {
    return ERROR_TABLE[this.code].status;
  }
}

export const isAppError = (e: unknown): e is AppError => e instanceof AppError;
