import { pkijs } from '@notary/trust/asn1';
import { DIGEST_BY_OID, equalBytes, fromBase64, fromHex, toArrayBuffer, toHex } from '@notary/trust/bytes';
import { chainsTo } from '@notary/trust/cert-path';
import {
  essNamesCertificate,
  hasCriticalTimeStampingEku,
  OID,
  parseSignedData,
  signerCertificate,
  subjectName,
  verifySignerInfo,
} from '@notary/trust/cms';
import { errorMessage } from './error-message.ts';
import { data, foreign, type Message, msg } from './messages/index.ts';
import type { Receipt } from './receipt.ts';
import { CheckBuilder, type CheckResult, notRun } from './report.ts';

/**
 * RFC 3161 TimeStampToken verification (RFC 3161 2.4.2, RFC 5816): the token is a CMS SignedData
 * encapsulating a TSTInfo whose message imprint is the expected hash; its signature (signed attributes
 * contentType id-ct-TSTInfo, messageDigest of the TSTInfo) verifies with the TSA certificate it carries, which
 * the ESS signing-certificate attribute names, whose extended key usage is exactly a critical
 * id-kp-timeStamping, and which chains to one of the given trust anchors at genTime (unless `chain` is
 * false: the caller judges the TSA certificate itself, e.g. at another time). The TSA certificate is looked
 * for in the token, then in `extraCertificates` (a token requested without certReq, its certificate in a
 * PAdES /DSS). Returns genTime, the TSA certificate and the certificates the token carries; null when the
 * token does not parse.
 */
export async function verifyTimestampToken(
  c: CheckBuilder,
  tokenDer: Uint8Array,
  imprint: Uint8Array,
  imprintLabel: Message,
  tsaCa: Uint8Array[] | undefined,
  chain = true,
  extraCertificates: pkijs.Certificate[] = [],
): Promise<{ genTime: Date; tsa?: pkijs.Certificate; certificates: pkijs.Certificate[] } | null> {
  let parsed: ReturnType<typeof parseSignedData>;
  let tst: pkijs.TSTInfo;
  let tstDer: Uint8Array;
  try {
    parsed = parseSignedData(tokenDer, 'timestamp token');
    if (parsed.signedData.encapContentInfo.eContentType !== OID.tstInfo) throw new Error('not a TSTInfo');
    const eContent = parsed.signedData.encapContentInfo.eContent;
    if (!eContent) throw new Error('no TSTInfo');
    tstDer = new Uint8Array(eContent.getValue());
    tst = pkijs.TSTInfo.fromBER(toArrayBuffer(tstDer));
  } catch (e) {
    c.fail(msg('tst.token'), msg('tst.doesNotParse', { error: errorMessage(e) }));
    return null;
  }
  const alg =
    DIGEST_BY_OID[tst.messageImprint.hashAlgorithm.algorithmId] ??
    tst.messageImprint.hashAlgorithm.algorithmId;
  const hashed = new Uint8Array(tst.messageImprint.hashedMessage.valueBlock.valueHexView);
  c.expect(
    alg === 'SHA-256' && equalBytes(hashed, imprint),
    msg('tst.imprint'),
    msg('tst.imprintValue', { alg, hash: toHex(hashed), what: imprintLabel, expected: toHex(imprint) }),
  );
  c.note(data('genTime'), data(tst.genTime.toISOString()));
  c.note(msg('tst.serialNumber'), data(tst.serialNumber.toBigInt().toString(16)));
  const cert =
    signerCertificate(parsed) ??
    signerCertificate({ ...parsed, certificates: [...parsed.certificates, ...extraCertificates] });
  if (!cert) {
    c.fail(msg('tst.tsaCertificate'), msg('tst.noSignerCertificate'));
    return { genTime: tst.genTime, certificates: parsed.certificates };
  }
  c.note(data('TSA'), data(subjectName(cert)));
  let sig: Awaited<ReturnType<typeof verifySignerInfo>>;
  try {
    sig = await verifySignerInfo(parsed, cert, tstDer, OID.tstInfo);
  } catch (e) {
    c.fail(msg('tst.signature'), foreign(errorMessage(e)));
    return { genTime: tst.genTime, tsa: cert, certificates: parsed.certificates };
  }
  c.expect(
    sig.contentType,
    msg('tst.signedContentType'),
    sig.contentType ? data('id-ct-TSTInfo') : msg('tst.contentTypeMissing'),
  );
  c.expect(
    sig.messageDigest,
    msg('tst.signedMessageDigest'),
    sig.messageDigest ? msg('tst.digestOfTstInfo', { alg: sig.digestAlgorithm }) : msg('tst.digestMismatch'),
  );
  c.expect(sig.signature, msg('tst.signature'), msg(sig.signature ? 'word.valid' : 'word.invalid'));
  const ess = await essNamesCertificate(parsed, cert);
  c.expect(
    ess === true,
    msg('tst.ess'),
    ess === null ? msg('word.absent') : msg(ess ? 'tst.essNamesTsa' : 'tst.essNamesOther'),
  );
  const eku = hasCriticalTimeStampingEku(cert);
  c.expect(eku, msg('tst.eku'), msg(eku ? 'tst.ekuOk' : 'tst.ekuWrong'));
  if (!chain) {
    // The caller judges the chain.
  } else if (tsaCa && tsaCa.length > 0) {
    const trusted = await chainsTo(cert, parsed.certificates, tsaCa, tst.genTime);
    c.expect(
      trusted.ok,
      msg('tst.chainToTsaCa'),
      trusted.ok ? msg('chain.trustedAt', { at: tst.genTime.toISOString() }) : trusted.detail,
    );
  } else {
    c.skip(msg('tst.noTsaCa'));
  }
  return { genTime: tst.genTime, tsa: cert, certificates: parsed.certificates };
}

/** Check 5: the receipt's RFC 3161 token over the document's SHA-256. */
export async function checkTimestamp(
  receipt: Receipt,
  tsaCa: Uint8Array[] | undefined,
): Promise<CheckResult> {
  if (!receipt.timestamp) return notRun(5, 'not-applicable', msg('tst.none'));
  const c = new CheckBuilder(5);
  let token: Uint8Array;
  try {
    token = fromBase64(receipt.timestamp.token);
  } catch {
    c.fail(msg('tst.token'), msg('tst.notBase64'));
    return c.result(data(''));
  }
  const stamped = await verifyTimestampToken(
    c,
    token,
    fromHex(receipt.document.sha256),
    msg('tst.documentSha256'),
    tsaCa,
  );
  if (stamped) {
    c.expect(
      stamped.genTime.toISOString() === receipt.timestamp.genTime,
      msg('tst.genTimeAsRecorded'),
      msg('value.receipt', { value: stamped.genTime.toISOString(), expected: receipt.timestamp.genTime }),
    );
  }
  return c.result(msg('tst.summary', { at: stamped?.genTime.toISOString() ?? '?' }));
}
