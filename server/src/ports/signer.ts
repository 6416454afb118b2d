/**
 * Signer port of PAdES certificates: the private key stays behind it, so a KMS or HSM key can replace the file key
 * (`adapters/signer/file.ts`) without touching the CMS code (`@notary/pdf/cades`, whose `CmsSigner` has this shape).
 */
export type SignatureAlgorithm = 'RSASSA-PKCS1-v1_5-SHA256' | 'ECDSA-P256-SHA256';

export interface DocumentSigner {
  /** DER X.509 certificates: the signer's first, then the chain up to (optionally including) the root. */
  readonly certificateChain: readonly Uint8Array[];
  readonly algorithm: SignatureAlgorithm;
  /**
   * Signs `data` (the DER of the CMS signed attributes, RFC 5652 section 5.4) with SHA-256 and the key's
   * algorithm. RSA: PKCS#1 v1.5 signature bytes. ECDSA: the DER `Ecdsa-Sig-Value` (RFC 3279), as CMS wants it.
   */
  sign(data: Uint8Array): Promise<Uint8Array>;
}
