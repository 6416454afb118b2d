import { readFile } from 'node:fs/promises';
import { rootCertificates } from 'node:tls';
import type { TsaConfig } from '../../config';
import type { TimestampAuthority } from '../../ports/tsa';
import { HttpTimestampAuthority, trustedCertificatesFromPem } from './http';

/**
 * The RFC 3161 client of `TSA_URL` (docs/certificates.md, Timestamps). Its tokens must chain to
 * `TSA_CA_CERTS` (a PEM file), or by default to Node's bundled Mozilla root store, which public TSAs chain to.
 * @throws Error when `TSA_CA_CERTS` cannot be read or holds no certificate.
 */
export async function createTimestampAuthority(config: TsaConfig): Promise<TimestampAuthority> {
  const pem = config.caCertsPath ? await readFile(config.caCertsPath, 'utf8') : rootCertificates.join('\n');
  const trustedCertificates = trustedCertificatesFromPem(pem);
  if (trustedCertificates.length === 0) throw new Error(`TSA_CA_CERTS ${config.caCertsPath}: no certificate`);
  return new HttpTimestampAuthority({ url: config.url, trustedCertificates, timeoutMs: config.timeoutMs });
}
