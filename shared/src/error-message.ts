/**
 * The message of whatever was thrown: an `Error`'s `message`, anything else as `String(value)` (a thrown string
 * as it is, `undefined` as "undefined"). For lines and answers that show a failure in one short sentence; logs
 * that want the stack pass the error itself as `{ err }`. Here, below every package (the verifier bundles it),
 * because `@notary/pdf` and the browser code may not import the Node-only platform.
 */
export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
