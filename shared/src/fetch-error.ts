/**
 * A failed `fetch` in a few words for a message: `timed out` (the request's `AbortSignal` timeout or abort), the
 * refused redirect, else the cause's code (`ECONNREFUSED`, …) or message, else the error's message; anything
 * thrown that is not an `Error` as `String(value)`.
 */
export function describeFetchError(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timed out';
  const cause = (e as Error & { cause?: { code?: string; message?: string } }).cause;
  // Node's fetch refuses a redirect with `redirect: 'error'` as "fetch failed", cause "unexpected redirect".
  if (cause?.message && /redirect/i.test(cause.message))
    return `${cause.message}: redirects are not followed`;
  return cause?.code ?? cause?.message ?? e.message;
}
