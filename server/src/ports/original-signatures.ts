import type { ReceiptOriginalSignatures } from '@notary/verify/receipt';

/**
 * Reads the signatures an uploaded PDF already carries (`@notary/verify/original-signatures`: signer, issuer,
 * claimed time, signature timestamp, SubFilter, policy, coverage, integrity, chain, embedded revocation), as
 * the receipt's `originalSignatures` holds them. Implemented by `adapters/original-signatures`, which parses
 * the untrusted PDF only in a bounded worker thread.
 */
export interface OriginalSignatureReader {
  /**
   * The signatures of `pdf`, judged at `at` (the notarization time) against the configured trust anchors.
   * Never throws for the input: a PDF past the worker's bounds, or one whose signatures do not read, is
   * `{status: 'unreadable', reason}`.
   * @throws AppError RATE_LIMITED when too many readings are under way; `signal`'s reason once it aborts.
   */
  read(pdf: Uint8Array, options: { at: Date; signal?: AbortSignal }): Promise<ReceiptOriginalSignatures>;
  /**
   * Whether `pdf` holds a signature dictionary at all (a quick scan of its bytes, no parsing): a PDF without one
   * is not read, and a damaged one without one says nothing of signatures.
   */
  carriesSignatureDictionary(pdf: Uint8Array): boolean;
}
