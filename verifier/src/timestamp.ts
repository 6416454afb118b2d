import * as pkijs from 'pkijs';
import { DIGEST_BY_OID, equalBytes, fromBase64, fromHex, toArrayBuffer, toHex } from './bytes.ts';
import {
  chainsTo,
  essNamesCertificate,
  hasCriticalTimeStampingEku,
  OID,
  parseSignedData,
  signerCertificate,
  subjectName,
  verifySignerInfo,
} from './cms.ts';
import { errorMessage } from './error-message.ts';
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
  imprintLabel: string,
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
    c.fail('token', `does not parse: ${errorMessage(e)}`);
    return null;
  }
  const alg =
    DIGEST_BY_OID[tst.messageImprint.hashAlgorithm.algorithmId] ??
    tst.messageImprint.hashAlgorithm.algorithmId;
  const hashed = new Uint8Array(tst.messageImprint.hashedMessage.valueBlock.valueHexView);
  c.expect(
    alg === 'SHA-256' && equalBytes(hashed, imprint),
    'message imprint',
    `${alg} ${toHex(hashed)} (${imprintLabel} ${toHex(imprint)})`,
  );
  c.note('genTime', tst.genTime.toISOString());
  c.note('serial number', tst.serialNumber.toBigInt().toString(16));
  const cert =
    signerCertificate(parsed) ??
    signerCertificate({ ...parsed, certificates: [...parsed.certificates, ...extraCertificates] });
  if (!cert) {
    c.fail('TSA certificate', 'the token does not carry the certificate its SignerInfo names');
    return { genTime: tst.genTime, certificates: parsed.certificates };
  }
  c.note('TSA', subjectName(cert));
  let sig: Awaited<ReturnType<typeof verifySignerInfo>>;
  try {
    sig = await verifySignerInfo(parsed, cert, tstDer, OID.tstInfo);
  } catch (e) {
    c.fail('signature', errorMessage(e));
    return { genTime: tst.genTime, tsa: cert, certificates: parsed.certificates };
  }
  c.expect(
    sig.contentType,
    'signed contentType',
    sig.contentType ? 'id-ct-TSTInfo' : 'missing or not id-ct-TSTInfo',
  );
  c.expect(
    sig.messageDigest,
    'signed messageDigest',
    sig.messageDigest ? `${sig.digestAlgorithm} of the TSTInfo` : 'does not match the TSTInfo',
  );
  c.expect(sig.signature, 'signature', sig.signature ? 'valid' : 'invalid');
  const ess = await essNamesCertificate(parsed, cert);
  c.expect(
    ess === true,
    'ESS signing certificate',
    ess === null ? 'absent' : ess ? 'names the TSA certificate' : 'names another certificate',
  );
  const eku = hasCriticalTimeStampingEku(cert);
  c.expect(
    eku,
    'extended key usage',
    eku ? 'critical id-kp-timeStamping only' : 'not exactly a critical id-kp-timeStamping',
  );
  if (!chain) {
    // The caller judges the chain.
  } else if (tsaCa && tsaCa.length > 0) {
    const trusted = await chainsTo(cert, parsed.certificates, tsaCa, tst.genTime);
    c.expect(
      trusted.ok,
      'chain to --tsa-ca',
      trusted.ok ? `trusted at ${tst.genTime.toISOString()}` : trusted.message,
    );
  } else {
    c.skip('the TSA certificate chain (no --tsa-ca given)');
  }
  return { genTime: tst.genTime, tsa: cert, certificates: parsed.certificates };
}

/** Check 5: the receipt's RFC 3161 token over the document's SHA-256. */
export async function checkTimestamp(
  receipt: Receipt,
  tsaCa: Uint8Array[] | undefined,
): Promise<CheckResult> {
  if (!receipt.timestamp)
    return notRun(5, 'not-applicable', 'the receipt carries no RFC 3161 token (none was issued)');
  const c = new CheckBuilder(5);
  let token: Uint8Array;
  try {
    token = fromBase64(receipt.timestamp.token);
  } catch {
    c.fail('token', 'not base64');
    return c.result('');
  }
  const stamped = await verifyTimestampToken(
    c,
    token,
    fromHex(receipt.document.sha256),
    'document SHA-256',
    tsaCa,
  );
  if (stamped) {
    c.expect(
      stamped.genTime.toISOString() === receipt.timestamp.genTime,
      'genTime as recorded',
      `${stamped.genTime.toISOString()} (receipt ${receipt.timestamp.genTime})`,
    );
  }
  return c.result(`the document's SHA-256 existed at ${stamped?.genTime.toISOString() ?? '?'} (RFC 3161)`);
}
