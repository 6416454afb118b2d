/**
 * What made a `fetch` fail: `timeout` (the request's `AbortSignal` timeout or abort), `redirect` (a redirect
 * refused, `cause` the runtime's words), else `other` with the cause's code (`ECONNREFUSED`, …) or message, else
 * the error's message; anything thrown that is not an `Error` is `other` with `String(value)`. Callers that
 * show the failure in several languages read this; `describeFetchError` says it in English.
 */
export type FetchFailure =
  | { kind: 'timeout' }
  | { kind: 'redirect'; cause: string }
  | { kind: 'other'; text: string };

/** The `FetchFailure` of `e` (see the type). */
export function fetchFailureOf(e: unknown): FetchFailure {
  if (!(e instanceof Error)) return { kind: 'other', text: String(e) };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return { kind: 'timeout' };
  const cause = (e as Error & { cause?: { code?: string; message?: string } }).cause;
  // Node's fetch refuses a redirect with `redirect: 'error'` as "fetch failed", cause "unexpected redirect".
  if (cause?.message && /redirect/i.test(cause.message)) return { kind: 'redirect', cause: cause.message };
  return { kind: 'other', text: cause?.code ?? cause?.message ?? e.message };
}

/**
 * A failed `fetch` in a few words for a message: `timed out` (the request's `AbortSignal` timeout or abort), the
 * refused redirect, else the cause's code (`ECONNREFUSED`, …) or message, else the error's message; anything
 * thrown that is not an `Error` as `String(value)`.
 */
export function describeFetchError(e: unknown): string {
  const failure = fetchFailureOf(e);
  if (failure.kind === 'timeout') return 'timed out';
  if (failure.kind === 'redirect') return `${failure.cause}: redirects are not followed`;
  return failure.text;
}
