/** What check 6 (the certificate's PAdES signature) is given besides the certificate PDF. */
export interface PadesCheckOptions {
  /** DER anchors the signer must chain to (`--trust-ca`, or the ICP-Brasil roots). */
  trustCa?: Uint8Array[] | undefined;
  /** DER anchors the timestamp authorities must chain to (`--tsa-ca`). */
  tsaCa?: Uint8Array[] | undefined;
  /** T, the time the signature is judged at (`--at`). */
  at: Date;
  /** May missing revocation data be fetched from the certificates' AIA / CRL DP URLs (`--online`)? */
  online?: boolean;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /**
   * The notarized file when the certificate is stamped (it begins with the file's bytes): signatures the file
   * already had are the original's, not the certificate's.
   */
  original?: Uint8Array | undefined;
}
