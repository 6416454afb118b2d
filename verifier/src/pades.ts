import * as asn1js from 'asn1js';
import { digest, fromHex, toHex } from './bytes.ts';
import {
  chainsTo,
  essNamesCertificate,
  fingerprint,
  OID,
  parseSignedData,
  signerCertificate,
  subjectName,
  verifySignerInfo,
} from './cms.ts';
import { CheckBuilder, type CheckResult, notRun } from './report.ts';
import { verifyTimestampToken } from './timestamp.ts';

/**
 * Check 6: the certificate's PAdES signature (ISO 32000-1 12.8, ETSI EN 319 142-1), when it is signed:
 * - the signature whose `/ByteRange [0 a b c]` reaches the end of the file is the certificate's own: it must
 *   cover every byte but its `/Contents <hex>` string (`a` is the `<`, `b` just after the `>`, `b + c` the
 *   file length), so nothing was appended or changed after signing;
 * - its CMS (detached, RFC 5652): `messageDigest` is the digest of the two ranges, the signature verifies
 *   with the signer certificate, signing-certificate-v2 names that certificate, and the certificate chains to
 *   `--trust-ca` (at the signature timestamp's time when there is one, else now);
 * - a signature timestamp (PAdES B-T, unsigned attribute id-aa-signatureTimeStampToken) is an RFC 3161
 *   token over the signature value, checked like check 5 (chain to `--tsa-ca`).
 */
export async function checkPadesSignature(
  certificate: Uint8Array | undefined,
  trustCa: Uint8Array[] | undefined,
  tsaCa: Uint8Array[] | undefined,
  now: Date,
): Promise<CheckResult> {
  if (!certificate) return notRun(6, 'no --certificate given');
  const text = latin1(certificate);
  const ranges = [...text.matchAll(/\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/g)].map((m) => ({
    at: m.index ?? 0,
    r: [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4])] as [number, number, number, number],
  }));
  if (ranges.length === 0) return notRun(6, 'the certificate is not signed');
  const c = new CheckBuilder(6);
  const ours = ranges.filter(({ r }) => r[2] + r[3] === certificate.length).at(-1);
  if (!ours) {
    c.fail(
      'ByteRange',
      `no signature covers the file up to its end (${certificate.length} bytes): bytes were added after signing`,
    );
    return c.result('');
  }
  const [start, a, b, c3] = ours.r;
  const hex = text.slice(a + 1, b - 1);
  const coversAll =
    start === 0 &&
    a < b &&
    text[a] === '<' &&
    text[b - 1] === '>' &&
    /^[0-9a-fA-F]*$/.test(hex) &&
    b + c3 === certificate.length;
  c.expect(
    coversAll,
    'ByteRange',
    `[0 ${a} ${b} ${c3}]: ${coversAll ? 'the whole file but the /Contents signature string' : 'does not cover the file but the signature'}`,
  );
  if (!coversAll) return c.result('');
  const subFilter = /\/SubFilter\s*\/([A-Za-z0-9.]+)/.exec(
    text.slice(Math.max(0, ours.at - 4000), ours.at + 4000),
  );
  c.note('SubFilter', subFilter?.[1] ?? 'unknown');
  const signedBytes = new Uint8Array(a + c3);
  signedBytes.set(certificate.subarray(0, a), 0);
  signedBytes.set(certificate.subarray(b, b + c3), a);

  let parsed: ReturnType<typeof parseSignedData>;
  try {
    parsed = parseSignedData(fromHex(hex), 'signature /Contents');
  } catch (e) {
    c.fail('CMS', (e as Error).message);
    return c.result('');
  }
  const cert = signerCertificate(parsed);
  if (!cert) {
    c.fail('signer certificate', 'the CMS does not carry the certificate its SignerInfo names');
    return c.result('');
  }
  c.note('signer', `${subjectName(cert)} (SHA-256 ${await fingerprint(cert)})`);
  const sig = await verifySignerInfo(parsed, cert, signedBytes, OID.data);
  c.expect(sig.contentType, 'signed contentType', sig.contentType ? 'id-data' : 'missing or not id-data');
  c.expect(
    sig.messageDigest,
    'signed messageDigest',
    sig.messageDigest
      ? `${sig.digestAlgorithm} of the signed ranges`
      : 'differs from the digest of the signed ranges',
  );
  c.expect(sig.signature, 'signature', sig.signature ? 'valid' : 'invalid');
  const ess = await essNamesCertificate(parsed, cert);
  c.expect(
    ess === true,
    'signing-certificate-v2',
    ess === null ? 'absent' : ess ? 'names the signer certificate' : 'names another certificate',
  );

  let signedAt: Date | undefined;
  const tokenAttr = parsed.signerInfo.unsignedAttrs?.attributes.find(
    (x) => x.type === OID.signatureTimeStampToken,
  );
  const tokenValue: unknown = tokenAttr?.values[0];
  if (tokenValue instanceof asn1js.Sequence) {
    const sub = new CheckBuilder(6);
    const signatureValue = new Uint8Array(parsed.signerInfo.signature.valueBlock.valueHexView);
    const stamped = await verifyTimestampToken(
      sub,
      new Uint8Array(tokenValue.toBER(false)),
      await digest(signatureValue),
      'SHA-256 of the signature value',
      tsaCa,
    );
    c.merge(sub, 'signature timestamp: ');
    signedAt = stamped?.genTime;
  } else {
    c.note('signature timestamp', 'none (PAdES B-B)');
  }
  if (trustCa && trustCa.length > 0) {
    const at = signedAt ?? now;
    const chain = await chainsTo(cert, parsed.certificates, trustCa, at);
    c.expect(chain.ok, 'chain to --trust-ca', chain.ok ? `trusted at ${at.toISOString()}` : chain.message);
  } else {
    c.skip('the signer certificate chain (no --trust-ca given)');
  }
  return c.result(
    `signed by ${subjectName(cert)}${signedAt ? ` at ${signedAt.toISOString()}` : ''}, covering the whole file ` +
      `(SHA-256 ${toHex(await digest(signedBytes)).slice(0, 16)}… of the signed ranges)`,
  );
}

/** Bytes as a one-char-per-byte string (offsets stay byte offsets). */
function latin1(bytes: Uint8Array): string {
  let out = '';
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) {
    out += String.fromCharCode(...bytes.subarray(i, i + chunk));
  }
  return out;
}
