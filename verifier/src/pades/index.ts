/**
 * Check 6: the certificate's PAdES signature (ISO 32000-1 12.8, ETSI EN 319 142-1) judged at time T, with
 * only what the file carries (its CMS, timestamp tokens and /DSS) unless `online`; each part in its own file
 * of this folder.
 */
import { digest, toHex } from '@notary/trust/bytes';
import { subjectName } from '@notary/trust/cms';
import { data, foreign, msg, render } from '../messages/index.ts';
import {
  type PdfSignature,
  PdfSignatureError,
  type PdfSignatures,
  readPdfSignatures,
  signedContent,
} from '../pdf-signatures.ts';
import { CheckBuilder, type CheckResult, notRun } from '../report.ts';
import { checkByteRange, selectSignature } from './byte-range.ts';
import { checkDocumentTimestamps } from './document-timestamps.ts';
import { readValidationMaterial } from './dss.ts';
import { checkLevel } from './level.ts';
import type { PadesCheckOptions } from './options.ts';
import { checkSignaturePolicy, checkSigningPeriod } from './policy.ts';
import { checkSignatureTimestamp } from './signature-timestamp.ts';
import { checkCmsIntegrity } from './signed-data.ts';
import { checkSignerCertificate } from './signer.ts';

export type { PadesCheckOptions } from './options.ts';

/**
 * Check 6: the certificate's PAdES signature (ISO 32000-1 12.8, ETSI EN 319 142-1) judged at time T, with
 * only what the file carries (its CMS, timestamp tokens and /DSS) unless `online`:
 * - the certificate's signature is the last `/Type /Sig` after the notarized original's bytes; its
 *   `/ByteRange [0 a b c]` covers its whole revision but the `/Contents` string, and the revisions after it
 *   only add validation data and document timestamps (no change to what it signed) (`byte-range.ts`);
 * - its CMS (RFC 5652, SubFilter ETSI.CAdES.detached or PBAD.PAdES): `messageDigest` is the digest of the
 *   ranges, the signature verifies with the signer certificate, signing-certificate-v2 names it
 *   (`signed-data.ts`); a declared ICP-Brasil policy holds (`policy.ts`);
 * - a signature timestamp (RFC 3161 over the signature value) and every later document timestamp
 *   (`/SubFilter /ETSI.RFC3161`: messageImprint = SHA-256 of its ranges) verify, with a critical
 *   id-kp-timeStamping TSA certificate chaining to `--tsa-ca` (`signature-timestamp.ts`,
 *   `document-timestamps.ts`);
 * - certificates (the signer's and each TSA's, every one of their chains) are judged at T: chain to the
 *   anchors and not revoked (revocation from the /DSS OCSP responses and CRLs: `dss.ts`, `judge.ts`). One
 *   expired or revoked at T still passes when a valid timestamp covering it proves the signature existed at a
 *   time t with notBefore <= t < min(notAfter, revocation time) (its proof of existence, POE) (`signer.ts`);
 * - the level reached (ETSI EN 319 142-1 6.2-6.5): B-B signed; B-T with a valid signature timestamp;
 *   B-LT with revocation data in the /DSS for every certificate of the signer's and the signature
 *   timestamp's chains; B-LTA with a valid document timestamp over a revision whose /DSS already had it
 *   (`level.ts`).
 * With `online`, a certificate whose revocation at T the file does not settle is looked up at its OCSP and
 * CRL URLs; a look-up that gets no usable answer is unavailability, not evidence: the check is then `partial`
 * (reason `unavailable`), never failed for it. A responder's answer that the certificate is revoked is
 * evidence.
 */
export async function checkPadesSignature(
  certificate: Uint8Array | undefined,
  options: PadesCheckOptions,
): Promise<CheckResult> {
  if (!certificate) return notRun(6, 'not-applicable', msg('pades.noCertificate'));
  const c = new CheckBuilder(6);
  const read = await readSignatures(c, certificate);
  if (!read) return c.result(data(''));
  const chosen = selectSignature(c, certificate, read, options.original);
  if ('result' in chosen) return chosen.result;
  const { ours, mine } = chosen;
  const at = options.at;
  c.note(msg('pades.judgedAt'), data(at.toISOString()));
  if (!(await checkByteRange(c, certificate, read, ours))) return c.result(data(''));
  noteSignatureDictionary(c, ours);
  const signedBytes = signedContent(certificate, ours);
  const cms = await checkCmsIntegrity(c, ours.cms, signedBytes);
  if (!cms) return c.result(data(''));
  const signatureOk = !c.failed;
  const policy = await checkSignaturePolicy(c, certificate, ours.cms, cms.parsed);
  const { material, judge } = readValidationMaterial(c, read.dss, cms.parsed.certificates, options);
  const dts = await checkDocumentTimestamps(c, certificate, mine, ours, judge, options);
  const coveringPoes = dts.valid.map((v) => v.genTime);
  const stamp = await checkSignatureTimestamp(c, cms.parsed, judge, coveringPoes, options);
  const provenAt = stamp.valid && stamp.signedAt ? stamp.signedAt : null;
  const signerPoes = [...(provenAt ? [provenAt] : []), ...coveringPoes];
  checkSigningPeriod(c, cms.parsed, provenAt);
  const signer = await checkSignerCertificate(c, cms.cert, judge, signerPoes, options);
  const level = await checkLevel(c, {
    failed: c.failed,
    signatureOk,
    subFilter: ours.subFilter,
    timestampValid: stamp.valid,
    signerPath: signer.path,
    tsaPath: stamp.tsaPath,
    judge,
    material,
    validDts: dts.valid,
    certificate,
    times: [at, ...signerPoes],
  });
  const signerName = subjectName(cms.cert);
  const result = c.result(
    msg('pades.summary', {
      signer: stamp.signedAt
        ? msg('pades.signerAt', { name: signerName, at: stamp.signedAt.toISOString() })
        : signerName,
      covering: msg(ours.coverage.wholeFile ? 'pades.wholeFile' : 'pades.itsRevision'),
      sha256: `${toHex(await digest(signedBytes)).slice(0, 16)}…`,
      level: level.level ? data(level.level) : msg('pades.noLevel'),
      at: at.toISOString(),
    }),
  );
  return {
    ...result,
    pades: {
      at: at.toISOString(),
      level: result.status === 'failed' ? null : level.level,
      notHigher: level.notHigher.map((m) => render(m, 'en')),
      notHigherMessages: level.notHigher,
      documentTimestamps: dts.count,
      validDocumentTimestamps: dts.valid.length,
      online: options.online === true,
      policy,
    },
  };
}

/** The certificate's signatures (ISO 32000-1 12.8); null when they do not read (`c` failed). */
async function readSignatures(c: CheckBuilder, certificate: Uint8Array): Promise<PdfSignatures | null> {
  try {
    return await readPdfSignatures(certificate);
  } catch (e) {
    if (!(e instanceof PdfSignatureError)) throw e;
    c.fail(msg('pades.signatures'), foreign(e.message));
    return null;
  }
}

/** The signature dictionary's `/SubFilter`, `/Filter` and `/M` (ISO 32000-1 12.8.1, Table 252), as found. */
function noteSignatureDictionary(c: CheckBuilder, ours: PdfSignature): void {
  c.note(data('SubFilter'), ours.subFilter ? data(ours.subFilter) : msg('word.unknown'));
  if (ours.filter) c.note(data('Filter'), data(ours.filter));
  if (ours.m) c.note(data('M'), data(ours.signingTime ? ours.signingTime.toISOString() : ours.m));
}
