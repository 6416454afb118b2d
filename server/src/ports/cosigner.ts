/**
 * The witness's cosigning key (C2SP tlog-cosignature, Ed25519 cosignature/v1): made once and kept by the adapter
 * (`WITNESS_KEY_FILE`, default `DATA_DIR/witness-key.pem`), never shown to the domain.
 */
export interface Cosigner {
  /** The witness's name, also its key's name: a scheme-less URL such as `notary.example/witness`. */
  readonly name: string;
  /** The verifier key (`<name>+<hex key ID>+<base64(0x04 || key)>`) logs and `notary-verify --witness` name. */
  readonly verifierKey: string;
  /** The 4-byte key ID of the cosignature lines (type 0x04). */
  readonly keyId: Uint8Array;
  /** The Ed25519 signature (64 bytes, RFC 8032) of `message`. */
  sign(message: Uint8Array): Uint8Array;
}
