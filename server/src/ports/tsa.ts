/**
 * RFC 3161 Time-Stamp Authority client port (spec, Documents: rule 6). Implemented by `adapters/tsa/http.ts`
 * (`TSA_URL`); PAdES B-T signatures use it as `@notary/pdf/cades`'s `SignatureTimestamper`. Errors are
 * `AppError('BAD_GATEWAY', ...)` naming what failed (unreachable, HTTP status, rejected status, imprint, nonce,
 * signature, chain, EKU, ESS certificate hash).
 */
export interface TimestampResult {
  /** The DER `TimeStampResp` exactly as the TSA sent it (what `.tsr` files hold; `openssl ts -verify -in`). */
  response: Uint8Array;
  /** The DER `TimeStampToken` (a CMS `ContentInfo`) inside it: what a PAdES signature timestamp embeds. */
  token: Uint8Array;
  /** `genTime` of the TSTInfo. */
  genTime: Date;
  /** TSTInfo serial number, hex. */
  serialNumber: string;
  /**
   * DER: the TSA certificate and its path to `trustAnchors` as verified; the token's other certificates (outside
   * its signature) are not here. PAdES B-LT/B-LTA gather revocation data for these only.
   */
  chain: Uint8Array[];
}

export interface TimestampAuthority {
  /**
   * The certificates (DER) a token's chain must reach (`TSA_CA_CERTS`, else the bundled roots): a PAdES B-LT
   * signature completes with them a TSA chain its token carries only in part.
   */
  readonly trustAnchors?: readonly Uint8Array[];
  /**
   * Requests a token over `digest` (32 bytes, SHA-256 message imprint) with a fresh nonce and `certReq`, and
   * checks everything RFC 3161 asks of the answer before returning it.
   */
  timestamp(digest: Uint8Array): Promise<TimestampResult>;
}
