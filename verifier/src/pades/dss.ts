/**
 * The validation material the certificate PDF carries: its Document Security Store (ETSI EN 319 142-1
 * 5.4.2: `/Certs`, `/OCSPs`, `/CRLs`, `/VRI`), and the certificates of the signature's CMS, from which the
 * certificates are judged.
 */
import type { pkijs } from '@notary/trust/asn1';
import { parseCertificate } from '@notary/trust/cert-path';
import type { ValidationMaterial } from '@notary/trust/revocation';
import { data, msg } from '../messages/index.ts';
import type { PdfSignatures } from '../pdf-signatures.ts';
import type { CheckBuilder } from '../report.ts';
import { Judge } from './judge.ts';
import type { PadesCheckOptions } from './options.ts';

/**
 * ETSI EN 319 142-1 5.4.2: the /DSS `dss` (null when the file has none) noted, its OCSP responses and CRLs
 * the material revocation is judged from, its certificates and the CMS's `cmsCertificates` the pool paths
 * are built from. Returns the material and the `Judge` holding them.
 */
export function readValidationMaterial(
  c: CheckBuilder,
  dss: PdfSignatures['dss'],
  cmsCertificates: pkijs.Certificate[],
  options: PadesCheckOptions,
): { material: ValidationMaterial; judge: Judge } {
  const material: ValidationMaterial = dss
    ? { certs: dss.certs, ocsps: dss.ocsps, crls: dss.crls }
    : { certs: [], ocsps: [], crls: [] };
  c.note(
    data('DSS'),
    dss
      ? msg('pades.dssValue', {
          certs: material.certs.length,
          ocsps: material.ocsps.length,
          crls: material.crls.length,
          vri: dss.vri.size,
        })
      : msg('word.none'),
  );
  const judge = new Judge(material, options);
  judge.addCertificates(cmsCertificates);
  judge.addCertificates(material.certs.map(parseCertificate).filter((x) => x !== null));
  return { material, judge };
}
