import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { digest, equalBytes, toArrayBuffer, toHex } from './bytes.ts';
import {
  certificateDer,
  essNamesCertificate,
  fingerprint,
  OID,
  parseSignedData,
  signerCertificate,
  subjectName,
  verifySignerInfo,
} from './cms.ts';
import { errorMessage } from './error-message.ts';
import { icpBrasilConformance, icpBrasilSigningPeriodRow } from './icp-brasil.ts';
import {
  changesAfter,
  type PdfSignature,
  PdfSignatureError,
  type PdfSignatures,
  readDss,
  readPdfSignatures,
  signedContent,
} from './pdf-signatures.ts';
import { CheckBuilder, type CheckResult, notRun, type PadesLevel, type PadesReport } from './report.ts';
import {
  crlUrls,
  gatherValidationMaterial,
  ocspUrls,
  type RevocationVerdict,
  revocationStatus,
  type ValidationMaterial,
} from './revocation.ts';
import { verifyTimestampToken } from './timestamp.ts';

/** What check 6 is given besides the certificate PDF. */
export interface PadesCheckOptions {
  /** DER anchors the signer must chain to (`--trust-ca`, or the ICP-Brasil roots). */
  trustCa?: Uint8Array[] | undefined;
  /** DER anchors the timestamp authorities must chain to (`--tsa-ca`). */
  tsaCa?: Uint8Array[] | undefined;
  /** T, the time the signature is judged at (`--at`). */
  at: Date;
  /** May missing revocation data be fetched from the certificates' AIA / CRL DP URLs (`--online`)? */
  online?: boolean;
  fetch?: typeof fetch;
  timeoutMs?: number;
  /**
   * The notarized file when the certificate is stamped (it begins with the file's bytes): signatures the file
   * already had are the original's, not the certificate's.
   */
  original?: Uint8Array | undefined;
}

/** Most revocation look-ups one check makes (certificates × candidate times), a bound for hostile files. */
const MAX_REVOCATION_LOOKUPS = 400;

/**
 * Check 6: the certificate's PAdES signature (ISO 32000-1 12.8, ETSI EN 319 142-1) judged at time T, with
 * only what the file carries (its CMS, timestamp tokens and /DSS) unless `online`:
 * - the certificate's signature is the last `/Type /Sig` after the notarized original's bytes; its
 *   `/ByteRange [0 a b c]` covers its whole revision but the `/Contents` string, and the revisions after it
 *   only add validation data and document timestamps (no change to what it signed);
 * - its CMS (RFC 5652, SubFilter ETSI.CAdES.detached or PBAD.PAdES): `messageDigest` is the digest of the
 *   ranges, the signature verifies with the signer certificate, signing-certificate-v2 names it;
 * - a signature timestamp (RFC 3161 over the signature value) and every later document timestamp
 *   (`/SubFilter /ETSI.RFC3161`: messageImprint = SHA-256 of its ranges) verify, with a critical
 *   id-kp-timeStamping TSA certificate chaining to `--tsa-ca`;
 * - certificates (the signer's and each TSA's, every one of their chains) are judged at T: chain to the
 *   anchors and not revoked (revocation from the /DSS OCSP responses and CRLs). One expired or revoked at T
 *   still passes when a valid timestamp covering it proves the signature existed at a time t with
 *   notBefore <= t < min(notAfter, revocation time) (its proof of existence, POE);
 * - the level reached (ETSI EN 319 142-1 6.2-6.5): B-B signed; B-T with a valid signature timestamp;
 *   B-LT with revocation data in the /DSS for every certificate of the signer's and the signature
 *   timestamp's chains; B-LTA with a valid document timestamp over a revision whose /DSS already had it.
 * With `online`, a certificate whose revocation at T the file does not settle is looked up at its OCSP and
 * CRL URLs; a look-up that gets no usable answer is unavailability, not evidence: the check is then `partial`
 * (reason `unavailable`), never failed for it. A responder's answer that the certificate is revoked is
 * evidence.
 */
export async function checkPadesSignature(
  certificate: Uint8Array | undefined,
  options: PadesCheckOptions,
): Promise<CheckResult> {
  if (!certificate) return notRun(6, 'not-applicable', 'no --certificate given');
  const c = new CheckBuilder(6);
  let read: PdfSignatures;
  try {
    read = await readPdfSignatures(certificate);
  } catch (e) {
    if (!(e instanceof PdfSignatureError)) throw e;
    c.fail('signatures', e.message);
    return c.result('');
  }
  const originalEnd =
    options.original && startsWith(certificate, options.original) ? options.original.length : 0;
  const inOriginal = read.signatures.filter((s) => s.coverage.end <= originalEnd);
  const mine = read.signatures.filter((s) => s.coverage.end > originalEnd);
  const ours = mine.filter((s) => !s.documentTimestamp).at(-1);
  if (!ours) {
    if (mine.length === 0) return notRun(6, 'not-applicable', 'the certificate is not signed');
    c.fail('signature', 'the certificate carries document timestamps but no signature');
    return c.result('');
  }
  if (inOriginal.length > 0) {
    c.note(
      'original',
      `${inOriginal.length} signature${inOriginal.length === 1 ? '' : 's'} of the notarized PDF, not judged here`,
    );
  }
  const at = options.at;
  c.note('judged at', at.toISOString());
  const [, a, b, c3] = ours.byteRange;
  if (!ours.coverage.wellFormed || !ours.coverage.endsARevision) {
    c.fail(
      'ByteRange',
      `[0 ${a} ${b} ${c3}]: ${ours.coverage.problem ?? 'does not end where a revision ends'}`,
    );
    return c.result('');
  }
  const lastRevisionEnd = read.revisions.at(-1) ?? 0;
  if (lastRevisionEnd !== certificate.length) {
    c.fail(
      'ByteRange',
      `no signature covers the file up to its end (${certificate.length} bytes): bytes were added after signing ` +
        `(${certificate.length - lastRevisionEnd} bytes after the last %%EOF)`,
    );
    return c.result('');
  }
  c.expect(
    true,
    'ByteRange',
    `[0 ${a} ${b} ${c3}]: the whole file but the /Contents signature string` +
      (ours.coverage.wholeFile ? '' : ` up to its revision (${ours.coverage.bytesAfter} bytes added after)`),
  );
  if (!ours.coverage.wholeFile) {
    let changes: Awaited<ReturnType<typeof changesAfter>>;
    try {
      changes = await changesAfter(certificate, ours.coverage.end);
    } catch (e) {
      c.fail('later revisions', (e as Error).message);
      return c.result('');
    }
    c.expect(
      changes.refused.length === 0,
      'later revisions',
      changes.refused.length === 0
        ? `add ${changes.added} objects (validation data, document timestamps)` +
            (changes.allowed.length > 0 ? `; update ${changes.allowed.join(', ')}` : '')
        : `change what was signed: ${changes.refused.slice(0, 10).join(', ')}`,
    );
    if (changes.refused.length > 0) return c.result('');
  }
  c.note('SubFilter', ours.subFilter ?? 'unknown');
  if (ours.filter) c.note('Filter', ours.filter);
  if (ours.m) c.note('M', ours.signingTime ? ours.signingTime.toISOString() : ours.m);
  const signedBytes = signedContent(certificate, ours);

  let parsed: ReturnType<typeof parseSignedData>;
  try {
    parsed = parseSignedData(ours.cms, 'signature /Contents');
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
  let sig: Awaited<ReturnType<typeof verifySignerInfo>>;
  try {
    sig = await verifySignerInfo(parsed, cert, signedBytes, OID.data);
  } catch (e) {
    c.fail('signature', (e as Error).message);
    return c.result('');
  }
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
  const signatureOk = !c.failed;
  // A declared ICP-Brasil policy (DOC-ICP-15.03): its tables' mandatory and forbidden entries and attributes.
  const icp = await icpBrasilConformance(certificate, ours.cms, parsed.signerInfo);
  if (icp.policy !== null) {
    c.note('signature policy', icp.policy);
    for (const row of icp.rows) c.expect(row.ok, `${row.table} ${row.row}`, row.detail);
  }

  const material: ValidationMaterial = read.dss
    ? { certs: read.dss.certs, ocsps: read.dss.ocsps, crls: read.dss.crls }
    : { certs: [], ocsps: [], crls: [] };
  c.note(
    'DSS',
    read.dss
      ? `${material.certs.length} certificates, ${material.ocsps.length} OCSP responses, ${material.crls.length} CRLs, ${read.dss.vri.size} VRI entries`
      : 'none',
  );
  const judge = new Judge(material, options);
  judge.addCertificates(parsed.certificates);
  judge.addCertificates(material.certs.map(parseCertificate).filter((x) => x !== null));

  // Document timestamps after the signature, latest first: a later one proves when an earlier one existed.
  const docTimestamps = mine.filter((s) => s.documentTimestamp && s.coverage.end > ours.coverage.end);
  const validDts: { sig: PdfSignature; genTime: Date; path: pkijs.Certificate[] }[] = [];
  for (const dt of [...docTimestamps].reverse()) {
    const label = `document timestamp ${dt.ref}: `;
    const sub = new CheckBuilder(6);
    if (!dt.coverage.wellFormed || !dt.coverage.endsARevision) {
      sub.fail('ByteRange', dt.coverage.problem ?? 'does not end where a revision ends');
      c.merge(sub, label);
      continue;
    }
    if (dt.subFilter !== 'ETSI.RFC3161')
      sub.note('SubFilter', `${dt.subFilter ?? 'none'} (not ETSI.RFC3161)`);
    const stamped = await verifyTimestampToken(
      sub,
      dt.cms,
      await digest(signedContent(certificate, dt)),
      'SHA-256 of its byte ranges',
      options.tsaCa,
      false,
      judge.certificates,
    );
    if (stamped?.tsa) {
      judge.addCertificates(stamped.certificates);
      const poes = validDts.filter((v) => v.sig.coverage.end > dt.coverage.end).map((v) => v.genTime);
      const verdict = await judge.certificate(stamped.tsa, options.tsaCa, at, poes, '--tsa-ca');
      verdict.report(sub, 'TSA');
      if (!sub.failed && verdict.ok !== false) {
        validDts.push({ sig: dt, genTime: stamped.genTime, path: verdict.path });
      }
    }
    c.merge(sub, label);
  }
  const coveringPoes = validDts.map((v) => v.genTime);

  let signedAt: Date | undefined;
  let tsaPath: pkijs.Certificate[] | null = null;
  let timestampValid = false;
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
      options.tsaCa,
      false,
      judge.certificates,
    );
    if (stamped?.tsa) {
      judge.addCertificates(stamped.certificates);
      const verdict = await judge.certificate(stamped.tsa, options.tsaCa, at, coveringPoes, '--tsa-ca');
      verdict.report(sub, 'TSA');
      tsaPath = verdict.path;
      timestampValid = !sub.failed && verdict.ok !== false;
    }
    c.merge(sub, 'signature timestamp: ');
    signedAt = stamped?.genTime;
  } else {
    c.note('signature timestamp', 'none (PAdES B-B)');
  }
  const signerPoes = [...(timestampValid && signedAt ? [signedAt] : []), ...coveringPoes];
  // The declared policy's signing period (DOC-ICP-15.03 Anexo 2 item 5.1), when the time is proven.
  const period = timestampValid && signedAt ? icpBrasilSigningPeriodRow(parsed.signerInfo, signedAt) : null;
  if (period) c.expect(period.ok, `${period.table} ${period.row}`, period.detail);
  const signer = await judge.certificate(cert, options.trustCa, at, signerPoes, '--trust-ca');
  signer.report(c, 'signer');
  for (const [subject, { source, reason }] of judge.unreachable) {
    c.partUnavailable(`the revocation of ${subject} (--online)`, source, reason);
  }

  const level = await padesLevel({
    failed: c.failed,
    signatureOk,
    subFilter: ours.subFilter,
    timestampValid,
    signerPath: signer.path,
    tsaPath,
    judge,
    material,
    validDts,
    certificate,
    times: [at, ...signerPoes],
  });
  c.note('PAdES level', level.level ?? 'none');
  for (const why of level.notHigher) c.note(`not ${nextLevel(level.level)}`, why);
  const result = c.result(
    `signed by ${subjectName(cert)}${signedAt ? ` at ${signedAt.toISOString()}` : ''}, covering ` +
      `${ours.coverage.wholeFile ? 'the whole file' : 'its revision'} (SHA-256 ` +
      `${toHex(await digest(signedBytes)).slice(0, 16)}… of the signed ranges), ${level.level ?? 'no'} level at ${at.toISOString()}`,
  );
  const pades: PadesReport = {
    at: at.toISOString(),
    level: result.status === 'failed' ? null : level.level,
    notHigher: level.notHigher,
    documentTimestamps: docTimestamps.length,
    validDocumentTimestamps: validDts.length,
    online: options.online === true,
    policy: icp.policy,
  };
  return { ...result, pades };
}

function nextLevel(level: PadesLevel | null): string {
  return level === null ? 'B-B' : level === 'B-B' ? 'B-T' : level === 'B-T' ? 'B-LT' : 'B-LTA';
}

/** ETSI EN 319 142-1 level reached, and why not the next one. */
async function padesLevel(x: {
  failed: boolean;
  signatureOk: boolean;
  subFilter: string | null;
  timestampValid: boolean;
  signerPath: pkijs.Certificate[];
  tsaPath: pkijs.Certificate[] | null;
  judge: Judge;
  material: ValidationMaterial;
  validDts: { sig: PdfSignature; genTime: Date }[];
  certificate: Uint8Array;
  times: Date[];
}): Promise<{ level: PadesLevel | null; notHigher: string[] }> {
  if (x.failed) {
    return {
      level: null,
      notHigher: [
        x.signatureOk
          ? 'a certificate, timestamp or later revision does not hold at the time judged'
          : 'the signature does not verify',
      ],
    };
  }
  if (x.subFilter !== 'ETSI.CAdES.detached' && x.subFilter !== 'PBAD.PAdES') {
    return { level: null, notHigher: [`SubFilter ${x.subFilter ?? 'none'} is not a PAdES baseline one`] };
  }
  if (!x.timestampValid || !x.tsaPath) {
    return { level: 'B-B', notHigher: ['no valid signature timestamp'] };
  }
  const paths = [x.signerPath, x.tsaPath];
  const missing = await x.judge.missingRevocation(paths, x.material, x.times);
  if (missing.length > 0) {
    return { level: 'B-T', notHigher: missing.map((m) => `no revocation data in the /DSS for ${m}`) };
  }
  if (x.validDts.length === 0) return { level: 'B-LT', notHigher: ['no valid document timestamp'] };
  const reasons: string[] = [];
  for (const dt of x.validDts) {
    let dss: Awaited<ReturnType<typeof readDss>>;
    try {
      dss = await readDss(x.certificate.subarray(0, dt.sig.coverage.end));
    } catch (e) {
      reasons.push(`the /DSS under document timestamp ${dt.sig.ref} does not read: ${(e as Error).message}`);
      continue;
    }
    const before = dss ? { certs: dss.certs, ocsps: dss.ocsps, crls: dss.crls } : null;
    const lacking = before ? await x.judge.missingRevocation(paths, before, x.times) : ['every certificate'];
    if (lacking.length === 0) return { level: 'B-LTA', notHigher: [] };
    reasons.push(`document timestamp ${dt.sig.ref} covers no revocation data for ${lacking.join(', ')}`);
  }
  return { level: 'B-LT', notHigher: reasons };
}

/** How a certificate fared at T (or at a proof of existence before it). */
interface CertificateVerdict {
  /** true valid, false refused, null not judged (no anchors). */
  ok: boolean | null;
  /** The path from the certificate to its anchor (or to a self-signed certificate the file carries). */
  path: pkijs.Certificate[];
  report(c: CheckBuilder, label: string): void;
}

/**
 * Judges certificates at T with the team's time rule: valid at T (chain, validity period, not revoked at or
 * before T), or else valid at a proof of existence t <= T from a valid timestamp covering the signature, with
 * notBefore <= t < min(notAfter, revocation time).
 */
class Judge {
  private lookups = 0;
  private readonly fetched = new Map<string, ValidationMaterial>();
  /** Why `--online` got no usable revocation data for a certificate (by DER key): its responders' failures. */
  private readonly fetchProblems = new Map<string, string>();
  /**
   * Certificates whose revocation at a time judged stays unknown because `--online` could not get it (a
   * responder unreachable, refusing, or answering what does not check out): subject to where and why. Not
   * evidence against the signature: check 6 is then partial (`CheckBuilder.partUnavailable`).
   */
  readonly unreachable = new Map<string, { source: string; reason: string }>();
  private readonly cache = new Map<string, Promise<RevocationVerdict>>();

  private readonly material: ValidationMaterial;
  private readonly options: PadesCheckOptions;
  /** Every certificate the file carries (CMS, tokens, /DSS), each once. */
  private readonly pool: pkijs.Certificate[] = [];
  private readonly inPool = new Set<string>();

  constructor(material: ValidationMaterial, options: PadesCheckOptions) {
    this.material = material;
    this.options = options;
  }

  /** The certificates the file carries so far. */
  get certificates(): pkijs.Certificate[] {
    return this.pool;
  }

  addCertificates(certs: pkijs.Certificate[]): void {
    for (const cert of certs) {
      const key = derKey(cert);
      if (this.inPool.has(key)) continue;
      this.inPool.add(key);
      this.pool.push(cert);
    }
  }

  async certificate(
    cert: pkijs.Certificate,
    anchorsDer: Uint8Array[] | undefined,
    at: Date,
    poes: Date[],
    anchorLabel: string,
  ): Promise<CertificateVerdict> {
    const name = subjectName(cert);
    const times = [
      at,
      ...poes.filter((t) => t.getTime() <= at.getTime()).sort((x, y) => x.getTime() - y.getTime()),
    ];
    let anchors: pkijs.Certificate[];
    try {
      anchors = (anchorsDer ?? []).map((der) => pkijs.Certificate.fromBER(toArrayBuffer(der)));
    } catch (e) {
      return this.refused(`a trust anchor does not parse: ${(e as Error).message}`, anchorLabel);
    }
    const trusting = anchors.length > 0;
    // Without anchors the path still ends at a self-signed certificate the file carries: its revocation data
    // is looked for (the level), its trust is not judged.
    const pathAnchors = trusting ? anchors : this.pool.filter((x) => isSelfSigned(x));
    let lastMessage = '';
    const lines: { label: string; value: string; ok?: boolean }[] = [];
    let found: { at: Date; path: pkijs.Certificate[] } | null = null;
    let anyPath: pkijs.Certificate[] = [cert];
    for (const t of times) {
      const chain = await buildPath(cert, this.pool, pathAnchors, t);
      if (!chain.path) {
        lastMessage = chain.message;
        continue;
      }
      anyPath = chain.path;
      const revoked = await this.revokedAt(chain.path, t);
      if (revoked) {
        lastMessage = revoked;
        continue;
      }
      found = { at: t, path: chain.path };
      break;
    }
    if (!found && anyPath.length === 1) {
      // The path at any time at all, for the revocation evidence and the level.
      for (const t of [at, ...times]) {
        const p = await buildPath(cert, this.pool, pathAnchors, t, true);
        if (p.path) {
          anyPath = p.path;
          break;
        }
      }
    }
    const path = found?.path ?? anyPath;
    const described = found ? [found.at, ...times.filter((t) => t !== found?.at)] : times;
    const revocationLines = await this.describeRevocation(path, described);
    lines.push(...revocationLines);
    const ok = found !== null;
    const when = found
      ? found.at.getTime() === at.getTime()
        ? `at ${at.toISOString()}`
        : `at ${found.at.toISOString()}, proven by a timestamp (at ${at.toISOString()}: ${lastMessage || 'not valid'})`
      : lastMessage || 'no valid path';
    return {
      ok: trusting ? ok : null,
      path,
      report: (c, label) => {
        if (trusting) {
          c.expect(ok, `chain to ${anchorLabel}`, ok ? `trusted ${when}` : `${name}: ${when}`);
        } else {
          c.skip(`the ${label} certificate chain (no ${anchorLabel} given)`);
          if (!ok && lastMessage) c.note(`${label} status`, `${name}: ${lastMessage}`);
        }
        for (const line of lines) {
          if (line.ok === undefined) c.note(`${label} ${line.label}`, line.value);
          else c.expect(line.ok, `${label} ${line.label}`, line.value);
        }
      },
    };
  }

  private refused(message: string, anchorLabel: string): CertificateVerdict {
    return {
      ok: false,
      path: [],
      report: (c) => c.fail(`chain to ${anchorLabel}`, message),
    };
  }

  /** Why the path is not usable at `t` because of a revocation at or before `t`; null when it is not. */
  private async revokedAt(path: pkijs.Certificate[], t: Date): Promise<string | null> {
    for (const [cert, issuer] of pairs(path)) {
      const v = await this.verdict(cert, issuer, t, true);
      if (v.status === 'revoked' && v.revokedAt.getTime() <= t.getTime()) {
        return `${subjectName(cert)} revoked at ${v.revokedAt.toISOString()}${v.reason ? ` (${v.reason})` : ''} (${v.source})`;
      }
    }
    return null;
  }

  /**
   * One evidence line per certificate of `path` (but its last): its revocation status at the first of `times`
   * the data speaks for, else at the first.
   */
  private async describeRevocation(
    path: pkijs.Certificate[],
    times: Date[],
  ): Promise<{ label: string; value: string }[]> {
    const out: { label: string; value: string }[] = [];
    for (const [cert, issuer] of pairs(path)) {
      let chosen: { v: RevocationVerdict; t: Date } | null = null;
      for (const t of times) {
        const v = await this.verdict(cert, issuer, t, true);
        if (!chosen) chosen = { v, t };
        if (speaksFor(v, t)) {
          chosen = { v, t };
          break;
        }
      }
      if (!chosen) continue;
      const { v, t } = chosen;
      const who = subjectName(cert);
      out.push({
        label: 'revocation',
        value:
          v.status === 'good'
            ? speaksFor(v, t)
              ? `${who}: good at ${t.toISOString()} (${v.source}, thisUpdate ${v.thisUpdate.toISOString()})`
              : `${who}: not revoked as of ${v.thisUpdate.toISOString()} (${v.source}), nothing newer for ${t.toISOString()}`
            : v.status === 'revoked'
              ? `${who}: revoked at ${v.revokedAt.toISOString()}${v.reason ? ` (${v.reason})` : ''} (${v.source})`
              : `${who}: unknown (${v.reason})`,
      });
    }
    return out;
  }

  /** Certificates of `paths` for which `material` gives no verdict at any of `times`. */
  async missingRevocation(
    paths: pkijs.Certificate[][],
    material: ValidationMaterial,
    times: Date[],
  ): Promise<string[]> {
    const missing: string[] = [];
    for (const path of paths) {
      if (path.length < 2) {
        missing.push(`${path[0] ? subjectName(path[0]) : 'a certificate'} (no issuer in the file)`);
        continue;
      }
      for (const [cert, issuer] of pairs(path)) {
        let known = false;
        for (const t of times) {
          const v = await this.lookup(cert, issuer, material, t);
          if (speaksFor(v, t)) {
            known = true;
            break;
          }
        }
        if (!known && !missing.includes(subjectName(cert))) missing.push(subjectName(cert));
      }
    }
    return missing;
  }

  /**
   * Revocation verdict for `cert` at `t` from the file's material; with `--online` and no verdict, from data
   * fetched for its path (once per issuer pair).
   */
  private async verdict(
    cert: pkijs.Certificate,
    issuer: pkijs.Certificate,
    t: Date,
    mayFetch: boolean,
  ): Promise<RevocationVerdict> {
    const fromFile = await this.lookup(cert, issuer, this.material, t);
    if (speaksFor(fromFile, t) || !mayFetch || !this.options.online) return fromFile;
    const key = derKey(cert);
    let fetched = this.fetched.get(key);
    const urls = [...ocspUrls(cert), ...crlUrls(cert)];
    if (!fetched) {
      const { material, missing } = await gatherValidationMaterial(
        [certificateDer(cert), certificateDer(issuer)],
        {
          ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
          ...(this.options.timeoutMs ? { timeoutMs: this.options.timeoutMs } : {}),
          now: this.options.at,
        },
      );
      fetched = material;
      this.fetched.set(key, fetched);
      const problem = missing.find((m) => m.subject === subjectName(cert));
      // A certificate that names no responder has nothing to fetch: that is not unavailability.
      if (problem && urls.length > 0) this.fetchProblems.set(key, problem.reason);
    }
    const online = await this.lookup(cert, issuer, fetched, t);
    const verdict = speaksFor(online, t) || fromFile.status === 'unknown' ? online : fromFile;
    const problem = this.fetchProblems.get(key);
    if (problem && !speaksFor(verdict, t)) {
      this.unreachable.set(subjectName(cert), { source: urls[0] ?? 'revocation', reason: problem });
    }
    return verdict;
  }

  private lookup(
    cert: pkijs.Certificate,
    issuer: pkijs.Certificate,
    material: ValidationMaterial,
    t: Date,
  ): Promise<RevocationVerdict> {
    const certDer = certificateDer(cert);
    const issuerDer = certificateDer(issuer);
    const key = `${materialKey(material)}|${derKey(cert)}|${derKey(issuer)}|${t.getTime()}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    if (++this.lookups > MAX_REVOCATION_LOOKUPS) {
      return Promise.resolve({ status: 'unknown', reason: 'too many revocation look-ups' });
    }
    const pending = revocationStatus(certDer, issuerDer, material, t).catch(
      (e: unknown): RevocationVerdict => ({
        status: 'unknown',
        reason: errorMessage(e),
      }),
    );
    this.cache.set(key, pending);
    return pending;
  }
}

/**
 * Clock difference tolerated between a responder and a TSA: a "good" answer whose thisUpdate is at most this
 * much before the time to prove still speaks for it.
 */
const FRESHNESS_SKEW_MS = 5 * 60_000;

/**
 * Whether a verdict says something about time `t`: revoked at or before `t`, or good as of a thisUpdate not
 * before `t` (less the skew): a "good" answer speaks only for times up to its thisUpdate.
 */
function speaksFor(v: RevocationVerdict, t: Date): boolean {
  if (v.status === 'revoked') return v.revokedAt.getTime() <= t.getTime();
  if (v.status === 'good') return v.thisUpdate.getTime() >= t.getTime() - FRESHNESS_SKEW_MS;
  return false;
}

const materialIds = new WeakMap<ValidationMaterial, number>();
let nextMaterialId = 0;
function materialKey(material: ValidationMaterial): number {
  let id = materialIds.get(material);
  if (id === undefined) {
    id = ++nextMaterialId;
    materialIds.set(material, id);
  }
  return id;
}

/** Each certificate of a path with its issuer (the next one), the last (anchor or self-signed) left out. */
function pairs(path: pkijs.Certificate[]): [pkijs.Certificate, pkijs.Certificate][] {
  const out: [pkijs.Certificate, pkijs.Certificate][] = [];
  for (let i = 0; i + 1 < path.length; i++)
    out.push([path[i] as pkijs.Certificate, path[i + 1] as pkijs.Certificate]);
  return out;
}

/**
 * RFC 5280 6.1 path from `cert` to one of `anchors` at `t` (pkijs' engine: signatures, validity periods,
 * basic constraints), extended past an anchor that is not self-signed to its issuer when the file or the
 * anchors carry it (so that its revocation is looked at too). `anyTime`: ignore validity periods (a path
 * for evidence only).
 */
async function buildPath(
  cert: pkijs.Certificate,
  pool: pkijs.Certificate[],
  anchors: pkijs.Certificate[],
  t: Date,
  anyTime = false,
): Promise<{ path: pkijs.Certificate[] | null; message: string }> {
  if (anchors.length === 0) return { path: null, message: 'no anchor' };
  const checkDate = anyTime
    ? new Date(Math.max(cert.notBefore.value.getTime(), Math.min(cert.notAfter.value.getTime(), t.getTime())))
    : t;
  const engine = new pkijs.CertificateChainValidationEngine({
    trustedCerts: anchors,
    certs: [...pool.filter((x) => derKey(x) !== derKey(cert)), cert],
    checkDate,
  });
  const result = await engine.verify({}).catch((e: unknown) => ({
    result: false,
    resultMessage: errorMessage(e),
    certificatePath: undefined,
  }));
  if (!result.result || !result.certificatePath) {
    return { path: null, message: result.resultMessage || 'no valid path' };
  }
  const path = [...result.certificatePath];
  for (let i = 0; i < 8; i++) {
    const last = path.at(-1) as pkijs.Certificate;
    if (isSelfSigned(last)) break;
    let issuer: pkijs.Certificate | undefined;
    for (const x of [...anchors, ...pool]) {
      if (!x.subject.isEqual(last.issuer) || path.some((p) => sameCertificate(p, x))) continue;
      if (await last.verify(x).catch(() => false)) {
        issuer = x;
        break;
      }
    }
    if (!issuer) break;
    path.push(issuer);
  }
  return { path, message: '' };
}

function isSelfSigned(cert: pkijs.Certificate): boolean {
  return cert.subject.isEqual(cert.issuer);
}

function sameCertificate(x: pkijs.Certificate, y: pkijs.Certificate): boolean {
  return derKey(x) === derKey(y);
}

const derKeys = new WeakMap<pkijs.Certificate, string>();
/** The certificate's DER as hex, computed once per object (pools are compared often). */
function derKey(cert: pkijs.Certificate): string {
  let key = derKeys.get(cert);
  if (key === undefined) {
    key = toHex(certificateDer(cert));
    derKeys.set(cert, key);
  }
  return key;
}

function parseCertificate(der: Uint8Array): pkijs.Certificate | null {
  try {
    return pkijs.Certificate.fromBER(toArrayBuffer(der));
  } catch {
    return null;
  }
}

function startsWith(whole: Uint8Array, prefix: Uint8Array): boolean {
  if (prefix.length === 0 || whole.length <= prefix.length) return false;
  return equalBytes(whole.subarray(0, prefix.length), prefix);
}
