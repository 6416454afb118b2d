/**
 * The message of whatever was thrown: an `Error`'s `message`, anything else as `String(value)`. The same
 * function as `errorMessage` of `@notary/shared`, kept here because `@notary/verify` has no dependencies (it is
 * published alone and bundled for Node 20 and the browser).
 */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
