/**
 * The ASN.1 and CMS libraries of this package (asn1js 4, pkijs 4), for code that hands this package parsed
 * objects or inspects those it returns (the verifier's checks, a test that reads a signature back): both
 * libraries check types with `instanceof`, and npm installs one copy per workspace, so an object matches only
 * its own copy. The verifier imports them from here only.
 */
export * as asn1js from 'asn1js';
export * as pkijs from 'pkijs';
