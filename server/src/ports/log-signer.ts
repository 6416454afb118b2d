/**
 * The transparency log's signing key (C2SP signed-note, Ed25519): made once and kept by the adapter
 * (`DATA_DIR/transparency-log-key.pem` beside the log's name), never shown to the domain.
 */
export interface LogSigner {
  /** The log's origin, also its key's name: a scheme-less URL such as `notary.example/log`. */
  readonly origin: string;
  /** The verifier key (`<name>+<hex key ID>+<base64 key>`) that receipts and `notary-verify --log-key` name. */
  readonly verifierKey: string;
  /** The 4-byte key ID of the signature lines. */
  readonly keyId: Uint8Array;
  /** The Ed25519 signature (64 bytes, RFC 8032) of a note's text (UTF-8). */
  sign(text: string): Uint8Array;
}
