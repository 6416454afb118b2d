/**
 * The ASN.1 and CMS libraries of this package (asn1js 4, pkijs 4) for code that hands `cades.ts` parsed
 * objects or reads those it returns (test fixtures, e.g. the ICP-Brasil policy artifacts): both libraries
 * check types with `instanceof`, so both sides must use the same copy, and npm installs one copy per workspace
 * while the root holds another major version.
 */
export * as asn1js from 'asn1js';
export * as pkijs from 'pkijs';
