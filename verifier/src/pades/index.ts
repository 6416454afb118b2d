/**
 * Check 6: the certificate's PAdES signature (ISO 32000-1 12.8, ETSI EN 319 142-1) judged at time T, with
 * only what the file carries (its CMS, timestamp tokens and /DSS) unless `online`; each part in its own file
 * of this folder.
 */
import { digest, toHex } from '@notary/trust/bytes';
import { commonName, subjectName } from '@notary/trust/cms';
import { data, foreign, type Message, msg, render } from '../messages/index.ts';
import {
  type PdfSignature,
  PdfSignatureError,
  type PdfSignatures,
  readPdfSignatures,
  signedContent,
} from '../pdf-signatures.ts';
import {
  CheckBuilder,
  type CheckResult,
  type CheckStatus,
  notRun,
  type PadesReport,
  type PadesSignerReport,
} from '../report.ts';
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
 * - the certificate's signatures are the `/Type /Sig` after the notarized original's bytes (the service's,
 *   and the tabelião's when they signed it too), each judged on its own as below; with more than one, each
 *   one's evidence is labelled with its position and signer, the check fails when one fails, and `pades`
 *   lists every signer's verdict (`signers`) beside the newest one's level; each signature's
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
  const { signatures, mine } = chosen;
  c.note(msg('pades.judgedAt'), data(options.at.toISOString()));
  if (signatures.length === 1) {
    const only = signatures[0] as PdfSignature;
    const judged = await judgeSignature(c, certificate, read, only, mine, options);
    const result = c.result(judged.summary);
    // A signature whose coverage or CMS does not hold has no level to report.
    if (judged.stopped) return result;
    return {
      ...result,
      pades: padesReport(judged, result.status, options, [signerReport(1, only, judged, result)]),
    };
  }
  // A certificate signed by the service and then by the tabelião: each signature judged on its own, its
  // evidence labelled with its position and signer, so that a bad one fails the check and names itself.
  const signers: PadesSignerReport[] = [];
  const lines: Message[] = [];
  let last: JudgedSignature | null = null;
  for (const [i, sig] of signatures.entries()) {
    const sub = new CheckBuilder(6);
    const judged = await judgeSignature(sub, certificate, read, sig, mine, options);
    const verdict = sub.result(judged.summary);
    const signer = judged.signerName ?? sig.name ?? sig.ref;
    c.merge(sub, (label) => msg('pades.signatureOf', { index: i + 1, signer, label }));
    const line = msg('pades.signerLine', {
      index: i + 1,
      signer,
      verdict: verdict.summaryMessage ?? data(verdict.summary),
    });
    lines.push(line);
    signers.push(signerReport(i + 1, sig, judged, verdict));
    last = judged;
  }
  const result = c.result(msg('pades.summaryMany', { count: signatures.length, signers: lines }));
  return {
    ...result,
    pades: padesReport(last as JudgedSignature, result.status, options, signers),
  };
}

/** What judging one signature found, for the summary and the report's `pades`. */
interface JudgedSignature {
  /** The signature's one-line summary (`data('')` when judging stopped early). */
  summary: Message;
  /** Judging stopped before the CMS was read (coverage or CMS failed). */
  stopped: boolean;
  /** The signer certificate's common name and subject; null when the CMS does not read. */
  signerName: string | null;
  subject: string | null;
  policy: string | null;
  level: Awaited<ReturnType<typeof checkLevel>> | null;
  dts: { count: number; valid: number };
}

/**
 * Judges the certificate signature `ours` (one of `mine`, the signatures after the original) into `c`: its
 * coverage, CMS, policy, timestamps, signer certificate and level, as `checkPadesSignature` describes.
 */
async function judgeSignature(
  c: CheckBuilder,
  certificate: Uint8Array,
  read: PdfSignatures,
  ours: PdfSignature,
  mine: PdfSignature[],
  options: PadesCheckOptions,
): Promise<JudgedSignature> {
  const stopped: JudgedSignature = {
    summary: data(''),
    stopped: true,
    signerName: null,
    subject: null,
    policy: null,
    level: null,
    dts: { count: 0, valid: 0 },
  };
  const at = options.at;
  if (!(await checkByteRange(c, certificate, read, ours))) return stopped;
  noteSignatureDictionary(c, ours);
  const signedBytes = signedContent(certificate, ours);
  const cms = await checkCmsIntegrity(c, ours.cms, signedBytes);
  if (!cms) return stopped;
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
  const subject = subjectName(cms.cert);
  return {
    summary: msg('pades.summary', {
      signer: stamp.signedAt
        ? msg('pades.signerAt', { name: subject, at: stamp.signedAt.toISOString() })
        : subject,
      covering: msg(ours.coverage.wholeFile ? 'pades.wholeFile' : 'pades.itsRevision'),
      sha256: `${toHex(await digest(signedBytes)).slice(0, 16)}…`,
      level: level.level ? data(level.level) : msg('pades.noLevel'),
      at: at.toISOString(),
    }),
    stopped: false,
    signerName: commonName(cms.cert),
    subject,
    policy,
    level,
    dts: { count: dts.count, valid: dts.valid.length },
  };
}

/** The report's `pades` from the newest signature judged, with every signer's own verdict. */
function padesReport(
  judged: JudgedSignature,
  status: CheckStatus,
  options: PadesCheckOptions,
  signers: PadesSignerReport[],
): PadesReport {
  const notHigher = judged.level?.notHigher ?? [];
  return {
    at: options.at.toISOString(),
    level: status === 'failed' ? null : (judged.level?.level ?? null),
    notHigher: notHigher.map((m) => render(m, 'en')),
    notHigherMessages: notHigher,
    documentTimestamps: judged.dts.count,
    validDocumentTimestamps: judged.dts.valid,
    online: options.online === true,
    policy: judged.policy,
    signers,
  };
}

/** One signer's line of the report: who signed (certificate and field), under which policy, at which level. */
function signerReport(
  index: number,
  sig: PdfSignature,
  judged: JudgedSignature,
  verdict: CheckResult,
): PadesSignerReport {
  return {
    index,
    name: judged.signerName ?? sig.name,
    subject: judged.subject,
    policy: judged.policy,
    level: verdict.status === 'failed' ? null : (judged.level?.level ?? null),
    status: verdict.status,
    ...(verdict.reason ? { reason: verdict.reason } : {}),
    summary: verdict.summary,
    ...(verdict.summaryMessage ? { summaryMessage: verdict.summaryMessage } : {}),
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
