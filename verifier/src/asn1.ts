/**
 * The ASN.1 and CMS libraries of this package (asn1js 4, pkijs 4), for code that inspects the objects the
 * CMS reader (`cms.ts`) returns, e.g. a test that reads a signature back: both libraries check types with
 * `instanceof`, and npm installs one copy per workspace, so a reader's objects match only its own copy.
 */
export * as asn1js from 'asn1js';
export * as pkijs from 'pkijs';
