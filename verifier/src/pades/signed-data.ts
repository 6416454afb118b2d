/**
 * The integrity of the signature's CMS (RFC 5652; `/SubFilter` ETSI.CAdES.detached or PBAD.PAdES): the
 * signer's certificate, the signed attributes and the signature value over the signed byte ranges.
 */

import type * as pkijs from 'pkijs';
import {
  essNamesCertificate,
  fingerprint,
  OID,
  type ParsedSignedData,
  parseSignedData,
  signerCertificate,
  subjectName,
  verifySignerInfo,
} from '../cms.ts';
import { errorMessage } from '../error-message.ts';
import type { CheckBuilder } from '../report.ts';

/**
 * RFC 5652 5.3, 5.4 and 5.6, 11.1, 11.2: `cms` (the signature's `/Contents`) parses as SignedData whose
 * SignerInfo names a certificate it carries; the signed `contentType` is id-data, `messageDigest` is the digest
 * of `signedBytes` (the byte ranges), and the signature over the signed attributes verifies with the signer's
 * key; then the ESS signing-certificate-v2 attribute (`checkSigningCertificate`). Returns the parsed CMS and
 * the signer's certificate; null when it cannot be judged further (`c` failed).
 */
export async function checkCmsIntegrity(
  c: CheckBuilder,
  cms: Uint8Array,
  signedBytes: Uint8Array,
): Promise<{ parsed: ParsedSignedData; cert: pkijs.Certificate } | null> {
  let parsed: ParsedSignedData;
  try {
    parsed = parseSignedData(cms, 'signature /Contents');
  } catch (e) {
    c.fail('CMS', errorMessage(e));
    return null;
  }
  const cert = signerCertificate(parsed);
  if (!cert) {
    c.fail('signer certificate', 'the CMS does not carry the certificate its SignerInfo names');
    return null;
  }
  c.note('signer', `${subjectName(cert)} (SHA-256 ${await fingerprint(cert)})`);
  let sig: Awaited<ReturnType<typeof verifySignerInfo>>;
  try {
    sig = await verifySignerInfo(parsed, cert, signedBytes, OID.data);
  } catch (e) {
    c.fail('signature', errorMessage(e));
    return null;
  }
  c.expect(sig.contentType, 'signed contentType', sig.contentType ? 'id-data' : 'missing or not id-data');
  c.expect(
    sig.messageDigest,
    'signed messageDigest',
    sig.messageDigest
      ? `${sig.digestAlgorithm} of the signed ranges`
      : 'differs from the digest of the signed ranges',
  );
  c.expect(sig.signature, 'signature', sig.signature ? 'valid' : 'invalid');
  await checkSigningCertificate(c, parsed, cert);
  return { parsed, cert };
}

/**
 * RFC 5035 ESS signing-certificate-v2, the signed attribute a CAdES baseline signature (ETSI EN 319 122-1)
 * binds its signer's certificate with: it is present and names the signer's certificate.
 */
async function checkSigningCertificate(
  c: CheckBuilder,
  parsed: ParsedSignedData,
  cert: pkijs.Certificate,
): Promise<void> {
  const ess = await essNamesCertificate(parsed, cert);
  c.expect(
    ess === true,
    'signing-certificate-v2',
    ess === null ? 'absent' : ess ? 'names the signer certificate' : 'names another certificate',
  );
}
