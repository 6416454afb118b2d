/**
 * The signature timestamp (ETSI EN 319 122-1 5.3, the signature-time-stamp unsigned attribute: an RFC 3161
 * token over the signature value), what makes a PAdES signature B-T.
 */

import type { pkijs } from '@notary/trust/asn1';
import { asn1js } from '@notary/trust/asn1';
import { digest } from '@notary/trust/bytes';
import { OID, type ParsedSignedData } from '@notary/trust/cms';
import { msg } from '../messages/index.ts';
import { CheckBuilder } from '../report.ts';
import { verifyTimestampToken } from '../timestamp.ts';
import type { Judge } from './judge.ts';
import type { PadesCheckOptions } from './options.ts';

/** What the signature timestamp proves. */
export interface SignatureTimestamp {
  /** Its genTime, when its token verified (whether or not its TSA is valid). */
  signedAt: Date | undefined;
  /** Its TSA's path, when the token verified. */
  tsaPath: pkijs.Certificate[] | null;
  /** The token verified and its TSA is valid at T or at a proof of existence `coveringPoes` gives. */
  valid: boolean;
}

/**
 * ETSI EN 319 122-1 5.3 and RFC 3161 2.4.2: the signature-time-stamp attribute of `parsed`'s SignerInfo, when
 * present, is a token whose messageImprint is the SHA-256 of the signature value, of a TSA chaining to
 * `--tsa-ca` at T or at one of `coveringPoes` (the valid document timestamps' genTimes). Its evidence in `c`,
 * prefixed `signature timestamp: `; noted absent (B-B) otherwise.
 */
export async function checkSignatureTimestamp(
  c: CheckBuilder,
  parsed: ParsedSignedData,
  judge: Judge,
  coveringPoes: Date[],
  options: PadesCheckOptions,
): Promise<SignatureTimestamp> {
  const tokenAttr = parsed.signerInfo.unsignedAttrs?.attributes.find(
    (x) => x.type === OID.signatureTimeStampToken,
  );
  const tokenValue: unknown = tokenAttr?.values[0];
  if (!(tokenValue instanceof asn1js.Sequence)) {
    c.note(msg('pades.signatureTimestamp'), msg('pades.noSignatureTimestampBB'));
    return { signedAt: undefined, tsaPath: null, valid: false };
  }
  const sub = new CheckBuilder(6);
  const signatureValue = new Uint8Array(parsed.signerInfo.signature.valueBlock.valueHexView);
  const stamped = await verifyTimestampToken(
    sub,
    new Uint8Array(tokenValue.toBER(false)),
    await digest(signatureValue),
    msg('pades.sha256OfSignatureValue'),
    options.tsaCa,
    false,
    judge.certificates,
  );
  let tsaPath: pkijs.Certificate[] | null = null;
  let valid = false;
  if (stamped?.tsa) {
    judge.addCertificates(stamped.certificates);
    const verdict = await judge.certificate(stamped.tsa, options.tsaCa, options.at, coveringPoes, '--tsa-ca');
    verdict.report(sub, 'tsa');
    tsaPath = verdict.path;
    valid = !sub.failed && verdict.ok !== false;
  }
  c.merge(sub, (inner) => msg('pades.inSignatureTimestamp', { inner }));
  return { signedAt: stamped?.genTime, tsaPath, valid };
}
