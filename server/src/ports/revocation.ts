/**
 * Revocation data source port (PAdES B-LT and B-LTA, ETSI EN 319 142-1 5.4.2): for a certificate chain, the
 * OCSP responses (RFC 6960) and CRLs (RFC 5280) a verifier needs once the responders are gone, fetched from
 * the certificates' own AIA OCSP and CRL distribution point URLs. `@notary/pdf/pades`'s `signPdfAtLevel` takes
 * `gather` as its `GatherValidationData`.
 */
export interface RevocationSource {
  /**
   * For every certificate of `chain` (DER, any order, roots included or not) whose issuer is in `chain`: an
   * OCSP response, else a CRL, each checked before it is kept. `material` holds DER blobs as a /DSS does;
   * `missing` names each certificate for which nothing could be had and why. Never throws for network or
   * answer errors.
   */
  gather(chain: readonly Uint8Array[]): Promise<{
    material: { certs: Uint8Array[]; ocsps: Uint8Array[]; crls: Uint8Array[] };
    missing: { subject: string; reason: string }[];
  }>;
  /**
   * `chain` (DER, leaf first) with the issuers it lacks, fetched from its certificates' AIA caIssuers URLs
   * (RFC 5280 4.2.2.1) through the same address policy and bounds as `gather`, each added only when its key
   * verifies the certificate it issues; the given certificates first. Never throws for network or answer
   * errors: an issuer that cannot be had is simply not added.
   */
  withIssuers(chain: readonly Uint8Array[]): Promise<Uint8Array[]>;
}
