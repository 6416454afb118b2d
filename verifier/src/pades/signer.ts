/** The signer's certificate and its path, judged at T (RFC 5280 6.1; revocation as `Judge` reads it). */
import type { pkijs } from '@notary/trust/asn1';
import { msg } from '../messages/index.ts';
import type { CheckBuilder } from '../report.ts';
import type { CertificateVerdict, Judge } from './judge.ts';
import type { PadesCheckOptions } from './options.ts';

/**
 * RFC 5280 6.1 and ETSI EN 319 142-1 5.4.2: the signer's certificate `cert` chains to `--trust-ca` and is not
 * revoked at T, or at one of `poes` (proofs of existence: the signature timestamp's and the document
 * timestamps' genTimes) when it expired or was revoked since. A revocation `--online` could not get makes the
 * check partial, never failed. Returns the verdict (its path for the level).
 */
export async function checkSignerCertificate(
  c: CheckBuilder,
  cert: pkijs.Certificate,
  judge: Judge,
  poes: Date[],
  options: PadesCheckOptions,
): Promise<CertificateVerdict> {
  const signer = await judge.certificate(cert, options.trustCa, options.at, poes, '--trust-ca');
  signer.report(c, 'signer');
  for (const [subject, { source, reason }] of judge.unreachable) {
    c.partUnavailable(msg('pades.revocationOfOnline', { subject }), source, reason);
  }
  return signer;
}
