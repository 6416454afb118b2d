/**
 * Revocation data port of long-term signatures (PAdES B-LT and B-LTA, ETSI EN 319 142-1 5.4): the OCSP
 * answers and CRLs of a certificate chain, as the certificate PDF's /DSS stores them. Implemented by
 * `adapters/revocation`, which asks the URLs the certificates name (AIA OCSP, CRL distribution points).
 */

/** DER blobs, as a PAdES /DSS holds them (ETSI EN 319 142-1 5.4.2). */
export interface RevocationMaterial {
  certs: Uint8Array[];
  ocsps: Uint8Array[];
  crls: Uint8Array[];
}

export interface RevocationSource {
  /**
   * Revocation data for every certificate of `chain` (DER, any order) whose issuer is in `chain`: checked OCSP
   * answers (signature, responder authority, certificate ID, freshness), else checked CRLs. `missing` names
   * each certificate for which nothing could be had and why (the level reached then stays below B-LT).
   * Never throws for network or answer errors.
   */
  gather(
    chain: readonly Uint8Array[],
  ): Promise<{ material: RevocationMaterial; missing: { subject: string; reason: string }[] }>;
}
