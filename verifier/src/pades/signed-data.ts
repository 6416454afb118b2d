/**
 * The integrity of the signature's CMS (RFC 5652; `/SubFilter` ETSI.CAdES.detached or PBAD.PAdES): the
 * signer's certificate, the signed attributes and the signature value over the signed byte ranges.
 */

import type { pkijs } from '@notary/trust/asn1';
import {
  essNamesCertificate,
  fingerprint,
  OID,
  type ParsedSignedData,
  parseSignedData,
  signerCertificate,
  subjectName,
  verifySignerInfo,
} from '@notary/trust/cms';
import { errorMessage } from '../error-message.ts';
import { data, foreign, msg } from '../messages/index.ts';
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
    c.fail(data('CMS'), foreign(errorMessage(e)));
    return null;
  }
  const cert = signerCertificate(parsed);
  if (!cert) {
    c.fail(msg('pades.signerCertificate'), msg('pades.noSignerCertificate'));
    return null;
  }
  c.note(
    msg('pades.signer'),
    msg('pades.nameSha256', { name: subjectName(cert), sha256: await fingerprint(cert) }),
  );
  let sig: Awaited<ReturnType<typeof verifySignerInfo>>;
  try {
    sig = await verifySignerInfo(parsed, cert, signedBytes, OID.data);
  } catch (e) {
    c.fail(msg('pades.signature'), foreign(errorMessage(e)));
    return null;
  }
  c.expect(
    sig.contentType,
    msg('tst.signedContentType'),
    sig.contentType ? data('id-data') : msg('pades.contentTypeMissing'),
  );
  c.expect(
    sig.messageDigest,
    msg('tst.signedMessageDigest'),
    sig.messageDigest
      ? msg('pades.digestOfRanges', { alg: sig.digestAlgorithm })
      : msg('pades.digestMismatch'),
  );
  c.expect(sig.signature, msg('pades.signature'), msg(sig.signature ? 'word.valid' : 'word.invalid'));
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
    data('signing-certificate-v2'),
    ess === null ? msg('word.absent') : msg(ess ? 'pades.essNamesSigner' : 'tst.essNamesOther'),
  );
}
