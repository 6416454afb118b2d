import { readBounded } from '@notary/shared/fetch-body';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { DIGEST_BY_OID, digest, equalBytes, toArrayBuffer, toBase64 } from './bytes.ts';
import { derKey, findIssuer, parseCertificate, sameCertificate, signedBy } from './cert-path.ts';
import { certificateDer, subjectName } from './cms.ts';
import {
  fetchProblem,
  problemOf,
  TrustError,
  type TrustMessage,
  trustForeign,
  trustMsg,
  trustText,
} from './messages.ts';

/**
 * Revocation data of X.509 certificates: fetching it from the certificates' own AIA OCSP URL (RFC 6960) or
 * CRL distribution point (RFC 5280), checking each answer (signature, authority, certificate ID, freshness),
 * and judging a certificate's status from such data alone, as a PAdES /DSS carries it (ETSI EN 319 142-1
 * 5.4.2). pkijs and WebCrypto only: this runs in browsers as in Node.
 */

/** DER blobs, as a PAdES /DSS holds them (ETSI EN 319 142-1 5.4.2). */
export interface ValidationMaterial {
  certs: Uint8Array[];
  ocsps: Uint8Array[];
  crls: Uint8Array[];
}

export interface GatherOptions {
  /**
   * `globalThis.fetch` by default. Node callers pass the address policy's fetch (`policedFetch`): an
   * `AddressRefusedError` it throws is reported with its own message.
   */
  fetch?: typeof fetch;
  /** Whole request (connect, send, receive), ms. Default 10 000. */
  timeoutMs?: number;
  /** Largest answer read, bytes. Default 1 MiB. */
  maxBytes?: number;
  /** The time answers must be fresh for (thisUpdate not after it, nextUpdate not before it). Default now. */
  now?: Date;
  /** Most HTTP requests one call makes. Default 32. */
  maxRequests?: number;
}

export type RevocationVerdict =
  | { status: 'good'; source: 'ocsp' | 'crl'; thisUpdate: Date; nextUpdate?: Date; producedAt?: Date }
  | { status: 'revoked'; source: 'ocsp' | 'crl'; revokedAt: Date; reason?: string }
  | { status: 'unknown'; reason: string; detail: TrustMessage };

/** A certificate whose revocation data could not be had: why in English (`reason`) and as data (`detail`). */
export interface MissingRevocation {
  subject: string;
  reason: string;
  detail: TrustMessage;
}

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_BYTES = 1024 * 1024;
export const DEFAULT_MAX_REQUESTS = 32;
/** Clock difference tolerated between us and a responder when judging freshness, ms. */
const CLOCK_SKEW_MS = 5 * 60_000;

const OID = {
  authorityInfoAccess: '1.3.6.1.5.5.7.1.1',
  adOcsp: '1.3.6.1.5.5.7.48.1',
  adCaIssuers: '1.3.6.1.5.5.7.48.2',
  ocspBasic: '1.3.6.1.5.5.7.48.1.1',
  ocspNoCheck: '1.3.6.1.5.5.7.48.1.5',
  crlDistributionPoints: '2.5.29.31',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  kpOcspSigning: '1.3.6.1.5.5.7.3.9',
  crlReason: '2.5.29.21',
  issuingDistributionPoint: '2.5.29.28',
  deltaCrlIndicator: '2.5.29.27',
  basicConstraints: '2.5.29.19',
} as const;

/** CRLReason names (RFC 5280 5.3.1); 7 is not used. */
const CRL_REASONS: Readonly<Record<number, string>> = {
  0: 'unspecified',
  1: 'keyCompromise',
  2: 'cACompromise',
  3: 'affiliationChanged',
  4: 'superseded',
  5: 'cessationOfOperation',
  6: 'certificateHold',
  8: 'removeFromCRL',
  9: 'privilegeWithdrawn',
  10: 'aACompromise',
};

/** OCSPResponseStatus names (RFC 6960 4.2.1). */
const OCSP_STATUS: Readonly<Record<number, string>> = {
  0: 'successful',
  1: 'malformedRequest',
  2: 'internalError',
  3: 'tryLater',
  5: 'sigRequired',
  6: 'unauthorized',
};

/**
 * For every certificate of `chain` (DER, any order, roots included or not) that has an issuer among `chain`
 * (self-signed certificates and those marked id-pkix-ocsp-nocheck need none): an OCSP answer from its AIA
 * id-ad-ocsp URL (RFC 6960 4.1, HTTP POST `application/ocsp-request`, appendix A.1), else a CRL from its CRL
 * distribution point (RFC 5280 4.2.1.13). Each answer is checked before it is kept: OCSP response status,
 * signature, responder authority (RFC 6960 4.2.2.2), certificate ID, a definite status; CRL signature by the
 * issuer, scope; both fresh at `now` (thisUpdate not after it, nextUpdate not before it). Redirects are
 * followed: the answers are signed, so where they come from does not matter; which destinations may be asked
 * at all is `options.fetch`'s to decide (in Node, the address policy's `policedFetch` of `@notary/platform`,
 * since the URLs come from certificates anyone can make). Requests carry no nonce (RFC 6960
 * 4.4.1 makes it optional): many responders serve pre-produced answers, and answers can then be cached.
 *
 * `material.certs` holds the chain and the responder certificates of the OCSP answers kept; `missing` names
 * each certificate for which nothing could be had and why (in English and as a `TrustMessage`). Never throws for network or answer errors; each
 * request is bounded by `timeoutMs` and `maxBytes`, and one call makes at most `maxRequests` requests (an
 * OCSP URL or a CRL URL is asked once per call).
 */
export async function gatherValidationMaterial(
  chain: readonly Uint8Array[],
  options: GatherOptions = {},
): Promise<{ material: ValidationMaterial; missing: MissingRevocation[] }> {
  const now = options.now ?? new Date();
  const certs: pkijs.Certificate[] = [];
  const missing: MissingRevocation[] = [];
  const miss = (subject: string, detail: TrustMessage) =>
    missing.push({ subject, reason: trustText(detail), detail });
  for (const der of chain) {
    const cert = parseCertificate(der);
    if (cert) certs.push(cert);
    else miss('a certificate of the chain', trustMsg('trust.certificateDoesNotParse'));
  }
  const fetcher = new BoundedFetcher(options);
  const crlsByUrl = new Map<string, Promise<Uint8Array>>();

  const jobs = certs.map(async (cert) => {
    if (await isSelfIssued(cert)) return null;
    if (hasExtension(cert, OID.ocspNoCheck)) return null;
    const issuer = await findIssuer(cert, certs);
    if (!issuer) return null;
    const problems: TrustMessage[] = [];
    for (const url of ocspUrls(cert)) {
      try {
        const request = new pkijs.OCSPRequest();
        await request.createForCertificate(cert, { hashAlgorithm: 'SHA-1', issuerCertificate: issuer });
        const der = await fetcher.get(url, {
          method: 'POST',
          headers: { 'content-type': 'application/ocsp-request', accept: 'application/ocsp-response' },
          body: new Uint8Array(request.toSchema(true).toBER(false)),
        });
        const answer = await checkOcsp(der, cert, issuer, []);
        if (!answer.ok) throw new TrustError(answer.problem);
        if (answer.status === 'unknown') throw new TrustError(trustMsg('trust.responderDoesNotKnow'));
        const stale = staleness(answer.thisUpdate, answer.nextUpdate, now);
        if (stale) throw new TrustError(stale);
        return { kind: 'ocsp' as const, der, responder: answer.responderCerts };
      } catch (e) {
        problems.push(trustMsg('trust.ocspAt', { url, problem: problemOf(e) }));
      }
    }
    for (const url of crlUrls(cert)) {
      try {
        let pending = crlsByUrl.get(url);
        if (!pending) {
          pending = fetcher.get(url, { method: 'GET', headers: { accept: 'application/pkix-crl' } });
          crlsByUrl.set(url, pending);
        }
        const der = await pending;
        const answer = await checkCrl(der, cert, issuer);
        if (!answer.ok) throw new TrustError(answer.problem);
        const stale = staleness(answer.thisUpdate, answer.nextUpdate, now);
        if (stale) throw new TrustError(stale);
        return { kind: 'crl' as const, der, responder: [] };
      } catch (e) {
        problems.push(trustMsg('trust.crlAt', { url, problem: problemOf(e) }));
      }
    }
    miss(
      subjectName(cert),
      problems.length > 0 ? trustMsg('trust.problems', { problems }) : trustMsg('trust.noResponderNorCrl'),
    );
    return null;
  });
  const found = await Promise.all(jobs);

  const material: ValidationMaterial = { certs: [], ocsps: [], crls: [] };
  const add = (list: Uint8Array[], der: Uint8Array) => {
    if (!list.some((x) => equalBytes(x, der))) list.push(der);
  };
  for (const cert of certs) add(material.certs, certificateDer(cert));
  for (const f of found) {
    if (!f) continue;
    add(f.kind === 'ocsp' ? material.ocsps : material.crls, f.der);
    for (const r of f.responder) add(material.certs, certificateDer(r));
  }
  return { material, missing };
}

/**
 * Revocation status of `cert` (issued by `issuer`; both DER) at time `at`, from `material` only (no network).
 *
 * Only answers whose signature and authority check out count: OCSP (RFC 6960 4.2.2.2, 3.2) signed by the
 * issuer, or by a responder certificate (in the answer or in `material.certs`) issued by the issuer with the
 * id-kp-OCSPSigning EKU and valid at producedAt, whose certificate ID (SHA-1 or SHA-256 issuer name and key
 * hashes, serial) names `cert`; CRLs (RFC 5280 6.3) signed by the issuer (cRLSign when the issuer has a key
 * usage), complete (not a delta) and in scope for `cert`.
 *
 * The verdict, OCSP preferred over CRL:
 * - `revoked` when an answer says `cert` was revoked at or before `at` (the earliest revocation time given);
 * - `good` when an answer says it was not revoked at `at`: a `good` answer, or a `revoked` one whose
 *   revocation time is after `at`. A good answer speaks only for times up to its `thisUpdate`: the one chosen
 *   is the earliest whose thisUpdate is at or after `at`, else the latest; the caller compares `thisUpdate`
 *   with the time it needs proven (for example the signature timestamp's time);
 * - `unknown` with the reason otherwise (no answer for that certificate, not signed by an authority, ...), in
 *   English (`reason`) and as data (`detail`).
 * @throws Error when `cert` or `issuer` does not parse.
 */
export async function revocationStatus(
  cert: Uint8Array,
  issuer: Uint8Array,
  material: ValidationMaterial,
  at: Date,
): Promise<RevocationVerdict> {
  const c = pkijs.Certificate.fromBER(toArrayBuffer(cert));
  const i = pkijs.Certificate.fromBER(toArrayBuffer(issuer));
  const extra = material.certs.map(parseCertificate).filter((x): x is pkijs.Certificate => x !== null);
  const problems: TrustMessage[] = [];
  const answers: Answer[] = [];
  const certIds = new Map<string, Promise<pkijs.CertID>>();
  for (const der of material.ocsps) {
    const a = await checkOcsp(der, c, i, extra, certIds);
    if (!a.ok) {
      if (a.forCertificate) problems.push(trustMsg('trust.anOcspAnswer', { problem: a.problem }));
    } else if (a.status === 'unknown') problems.push(trustMsg('trust.ocspSaysUnknown'));
    else answers.push({ ...a, source: 'ocsp' });
  }
  for (const der of material.crls) {
    const a = await checkCrl(der, c, i);
    if (!a.ok) {
      if (a.forIssuer) problems.push(trustMsg('trust.aCrl', { problem: a.problem }));
    } else answers.push({ ...a, source: 'crl' });
  }

  const t = at.getTime();
  const ocspFirst = (a: Answer, b: Answer) => (a.source === b.source ? 0 : a.source === 'ocsp' ? -1 : 1);
  const revoked = answers
    .filter((a) => a.revokedAt && a.revokedAt.getTime() <= t)
    .sort((a, b) => ocspFirst(a, b) || (a.revokedAt?.getTime() ?? 0) - (b.revokedAt?.getTime() ?? 0));
  const r = revoked[0];
  if (r?.revokedAt) {
    return {
      status: 'revoked',
      source: r.source,
      revokedAt: r.revokedAt,
      ...(r.reason ? { reason: r.reason } : {}),
    };
  }
  // Every answer left says "not revoked at `at`" (a revocation after `at` says so too), as of its thisUpdate.
  const asGood = (a: Answer): RevocationVerdict => ({
    status: 'good',
    source: a.source,
    thisUpdate: a.thisUpdate,
    ...(a.nextUpdate ? { nextUpdate: a.nextUpdate } : {}),
    ...(a.producedAt ? { producedAt: a.producedAt } : {}),
  });
  const covering = answers
    .filter((a) => a.thisUpdate.getTime() >= t)
    .sort((a, b) => ocspFirst(a, b) || a.thisUpdate.getTime() - b.thisUpdate.getTime());
  if (covering[0]) return asGood(covering[0]);
  const latest = [...answers].sort(
    (a, b) => ocspFirst(a, b) || b.thisUpdate.getTime() - a.thisUpdate.getTime(),
  );
  if (latest[0]) return asGood(latest[0]);
  const detail =
    problems.length > 0
      ? trustMsg('trust.problems', { problems })
      : trustMsg('trust.noAnswerAbout', { ocsps: material.ocsps.length, crls: material.crls.length });
  return { status: 'unknown', reason: trustText(detail), detail };
}

/** A checked answer about one certificate, OCSP or CRL. */
interface Answer {
  source: 'ocsp' | 'crl';
  thisUpdate: Date;
  nextUpdate?: Date;
  producedAt?: Date;
  revokedAt?: Date;
  reason?: string;
}

type OcspCheck =
  | {
      ok: true;
      status: 'good' | 'revoked' | 'unknown';
      revokedAt?: Date;
      reason?: string;
      thisUpdate: Date;
      nextUpdate?: Date;
      producedAt: Date;
      /** Certificates the answer carries (the responder's among them). */
      responderCerts: pkijs.Certificate[];
    }
  | { ok: false; problem: TrustMessage; forCertificate: boolean };

/**
 * Checks one DER OCSPResponse (RFC 6960 4.2.1) as an answer about `cert` issued by `issuer`: status
 * successful, a BasicOCSPResponse, a SingleResponse whose CertID names `cert`, a signature by the issuer or by
 * a delegated responder (RFC 6960 4.2.2.2: issued by the issuer, id-kp-OCSPSigning, valid at producedAt) found
 * among the answer's certificates or `extra`. `forCertificate`: whether the answer names `cert` at all.
 */
async function checkOcsp(
  der: Uint8Array,
  cert: pkijs.Certificate,
  issuer: pkijs.Certificate,
  extra: pkijs.Certificate[],
  certIds: Map<string, Promise<pkijs.CertID>> = new Map(),
): Promise<OcspCheck> {
  const basic = parseOcsp(der);
  if (isProblem(basic)) return { ok: false, problem: basic, forCertificate: false };
  const data = basic.tbsResponseData;
  let single: pkijs.SingleResponse | undefined;
  for (const r of data.responses) {
    const algorithm = DIGEST_BY_OID[r.certID.hashAlgorithm.algorithmId];
    if (!algorithm) continue;
    let id = certIds.get(algorithm);
    if (!id) {
      id = pkijs.CertID.create(cert, { hashAlgorithm: algorithm, issuerCertificate: issuer });
      certIds.set(algorithm, id);
    }
    if (r.certID.isEqual(await id)) {
      single = r;
      break;
    }
  }
  if (!single) {
    return { ok: false, problem: trustMsg('trust.noResponseForCertificate'), forCertificate: false };
  }

  const carried = basic.certs ?? [];
  const named = await responderCandidates(data.responderID, [issuer, ...carried, ...extra]);
  if (named.length === 0) {
    return { ok: false, problem: trustMsg('trust.responderNotInAnswer'), forCertificate: true };
  }
  // Several certificates may carry the responder's name or key: the answer holds if one of them signed it
  // and is an authority for the issuer.
  let refusal: TrustMessage | null = null;
  for (const signer of named) {
    const problem = await responderProblem(basic, signer, issuer);
    if (!problem) {
      refusal = null;
      break;
    }
    refusal ??= problem;
  }
  if (refusal) return { ok: false, problem: refusal, forCertificate: true };
  const status = single.certStatus as asn1js.BaseBlock;
  const base = {
    ok: true as const,
    thisUpdate: single.thisUpdate,
    ...(single.nextUpdate ? { nextUpdate: single.nextUpdate } : {}),
    producedAt: data.producedAt,
    responderCerts: carried,
  };
  if (status.idBlock.tagClass === 3 && status.idBlock.tagNumber === 0) return { ...base, status: 'good' };
  if (
    status.idBlock.tagClass === 3 &&
    status.idBlock.tagNumber === 1 &&
    status instanceof asn1js.Constructed
  ) {
    // RevokedInfo ::= SEQUENCE { revocationTime GeneralizedTime, revocationReason [0] EXPLICIT CRLReason OPTIONAL }
    const [time, reasonTag] = status.valueBlock.value;
    if (!(time instanceof asn1js.GeneralizedTime)) {
      return { ok: false, problem: trustMsg('trust.revokedWithoutTime'), forCertificate: true };
    }
    const code =
      reasonTag instanceof asn1js.Constructed && reasonTag.valueBlock.value[0] instanceof asn1js.Enumerated
        ? reasonTag.valueBlock.value[0].valueBlock.valueDec
        : undefined;
    return {
      ...base,
      status: 'revoked',
      revokedAt: time.toDate(),
      ...(code === undefined ? {} : { reason: CRL_REASONS[code] ?? String(code) }),
    };
  }
  return { ...base, status: 'unknown' };
}

type CrlCheck =
  | { ok: true; thisUpdate: Date; nextUpdate?: Date; revokedAt?: Date; reason?: string }
  | { ok: false; problem: TrustMessage; forIssuer: boolean };

/**
 * Checks one DER CRL (RFC 5280 5, 6.3) as evidence about `cert` issued by `issuer`: issued and signed by
 * `issuer` (cRLSign when it has a key usage), a complete CRL (no delta indicator) whose issuing distribution
 * point, if any, covers `cert`, and looks `cert`'s serial up. `forIssuer`: whether the CRL names `issuer`.
 */
async function checkCrl(
  der: Uint8Array,
  cert: pkijs.Certificate,
  issuer: pkijs.Certificate,
): Promise<CrlCheck> {
  const crl = parseCrl(der);
  if (isProblem(crl)) return { ok: false, problem: crl, forIssuer: false };
  if (!crl.issuer.isEqual(issuer.subject) || !cert.issuer.isEqual(issuer.subject)) {
    return { ok: false, problem: trustMsg('trust.crlOtherIssuer'), forIssuer: false };
  }
  const keyUsage = issuer.extensions?.find((x) => x.extnID === OID.keyUsage);
  if (keyUsage && !keyUsageBit(keyUsage, 6)) {
    return { ok: false, problem: trustMsg('trust.noCrlSign'), forIssuer: true };
  }
  let signatureOk = false;
  try {
    signatureOk = await pkijs
      .getCrypto(true)
      .verifyWithPublicKey(
        crl.tbsView.slice().buffer,
        crl.signatureValue,
        issuer.subjectPublicKeyInfo,
        crl.signatureAlgorithm,
      );
  } catch {
    signatureOk = false;
  }
  if (!signatureOk) return { ok: false, problem: trustMsg('trust.crlSignature'), forIssuer: true };
  const extensions = crl.crlExtensions?.extensions ?? [];
  if (extensions.some((x) => x.extnID === OID.deltaCrlIndicator)) {
    return { ok: false, problem: trustMsg('trust.deltaCrl'), forIssuer: true };
  }
  const idp = extensions.find((x) => x.extnID === OID.issuingDistributionPoint)?.parsedValue;
  if (idp instanceof pkijs.IssuingDistributionPoint) {
    const isCa = isCaCertificate(cert);
    if (idp.onlyContainsAttributeCerts || idp.indirectCRL || idp.onlySomeReasons !== undefined) {
      return { ok: false, problem: trustMsg('trust.partialCrl'), forIssuer: true };
    }
    if ((idp.onlyContainsUserCerts && isCa) || (idp.onlyContainsCACerts && !isCa)) {
      return { ok: false, problem: trustMsg('trust.crlScope'), forIssuer: true };
    }
  }
  const thisUpdate = crl.thisUpdate.value;
  const nextUpdate = crl.nextUpdate?.value;
  const entry = crl.revokedCertificates?.find((r) => r.userCertificate.isEqual(cert.serialNumber));
  const base = { ok: true as const, thisUpdate, ...(nextUpdate ? { nextUpdate } : {}) };
  if (!entry) return base;
  const reasonExt = entry.crlEntryExtensions?.extensions.find((x) => x.extnID === OID.crlReason);
  let reason: string | undefined;
  if (reasonExt) {
    const parsed = asn1js.fromBER(reasonExt.extnValue.valueBlock.valueHexView);
    if (parsed.result instanceof asn1js.Enumerated) {
      const code = parsed.result.valueBlock.valueDec;
      // removeFromCRL only appears in delta CRLs: the certificate is not (or no longer) revoked.
      if (code === 8) return base;
      reason = CRL_REASONS[code] ?? String(code);
    }
  }
  return { ...base, revokedAt: entry.revocationDate.value, ...(reason ? { reason } : {}) };
}

/**
 * Parsed answers by blob: one /DSS is judged many times (each certificate, each candidate time), its blobs
 * are parsed once. A `TrustMessage` is why the blob is no usable answer.
 */
const parsedOcsps = new WeakMap<Uint8Array, pkijs.BasicOCSPResponse | TrustMessage>();
const parsedCrls = new WeakMap<Uint8Array, pkijs.CertificateRevocationList | TrustMessage>();

/**
 * OCSP answers parsed, by their bytes (base64): a revocation cache hands out a fresh copy of the same answer
 * each time (a signing at B-LTA asks for the signer's twice and the TSA's twice), which the by-blob memo above
 * cannot recognise. OCSP answers only (a few KB; a CRL may be megabytes), at most `OCSP_MEMO_ENTRIES`.
 */
const parsedOcspsByBytes = new Map<string, pkijs.BasicOCSPResponse | TrustMessage>();
const OCSP_MEMO_ENTRIES = 64;
const OCSP_MEMO_MAX_BYTES = 64 * 1024;

/** Whether a parse gave why there is no answer rather than the answer. */
function isProblem<T extends object>(parsed: T | TrustMessage): parsed is TrustMessage {
  return !(parsed instanceof pkijs.BasicOCSPResponse || parsed instanceof pkijs.CertificateRevocationList);
}

/** The BasicOCSPResponse of a successful OCSPResponse (RFC 6960 4.2.1), or why there is none. */
function parseOcsp(der: Uint8Array): pkijs.BasicOCSPResponse | TrustMessage {
  const known = parsedOcsps.get(der);
  if (known !== undefined) return known;
  const bytesKey = der.byteLength <= OCSP_MEMO_MAX_BYTES ? toBase64(der) : undefined;
  const same = bytesKey === undefined ? undefined : parsedOcspsByBytes.get(bytesKey);
  if (same !== undefined) {
    parsedOcsps.set(der, same);
    return same;
  }
  let out: pkijs.BasicOCSPResponse | TrustMessage;
  try {
    const response = pkijs.OCSPResponse.fromBER(toArrayBuffer(der));
    const status = response.responseStatus.valueBlock.valueDec;
    if (status !== 0) out = trustMsg('trust.ocspStatus', { status: OCSP_STATUS[status] ?? status });
    else if (!response.responseBytes || response.responseBytes.responseType !== OID.ocspBasic) {
      out = trustMsg('trust.notBasicOcsp');
    } else
      out = pkijs.BasicOCSPResponse.fromBER(
        new Uint8Array(response.responseBytes.response.valueBlock.valueHexView),
      );
  } catch (e) {
    out = trustMsg('trust.doesNotParse', { error: problemOf(e) });
  }
  parsedOcsps.set(der, out);
  if (bytesKey !== undefined) {
    if (parsedOcspsByBytes.size >= OCSP_MEMO_ENTRIES) parsedOcspsByBytes.clear();
    parsedOcspsByBytes.set(bytesKey, out);
  }
  return out;
}

function parseCrl(der: Uint8Array): pkijs.CertificateRevocationList | TrustMessage {
  const known = parsedCrls.get(der);
  if (known !== undefined) return known;
  let out: pkijs.CertificateRevocationList | TrustMessage;
  try {
    out = pkijs.CertificateRevocationList.fromBER(toArrayBuffer(der));
  } catch (e) {
    out = trustMsg('trust.doesNotParse', { error: problemOf(e) });
  }
  parsedCrls.set(der, out);
  return out;
}

/**
 * The time an OCSP answer (the earliest nextUpdate of its SingleResponses, RFC 6960 4.2.1) or a CRL (its
 * nextUpdate, RFC 5280 5.1.2.5) stops being current, ms since the epoch; undefined when it names none or is
 * neither (what a cache of answers keeps them for).
 */
export function nextUpdateOf(der: Uint8Array): number | undefined {
  const basic = parseOcsp(der);
  if (!isProblem(basic)) {
    const times = basic.tbsResponseData.responses.map((r) => r.nextUpdate?.getTime());
    if (times.length === 0 || times.some((t) => t === undefined)) return undefined;
    return Math.min(...(times as number[]));
  }
  const crl = parseCrl(der);
  return isProblem(crl) ? undefined : crl.nextUpdate?.value.getTime();
}

/** Why an answer is not fresh at `now` (RFC 5280 6.3.3 a, RFC 6960 4.2.2.1), or null. */
function staleness(thisUpdate: Date, nextUpdate: Date | undefined, now: Date): TrustMessage | null {
  if (thisUpdate.getTime() > now.getTime() + CLOCK_SKEW_MS) {
    return trustMsg('trust.thisUpdateFuture', { at: thisUpdate.toISOString() });
  }
  if (nextUpdate && nextUpdate.getTime() < now.getTime()) {
    return trustMsg('trust.stale', { at: nextUpdate.toISOString() });
  }
  return null;
}

/** HTTP GET/POST of binary answers with a timeout, a size bound and a request budget. */
class BoundedFetcher {
  private readonly fetch: typeof fetch;
  private readonly timeoutMs: number;
  private readonly maxBytes: number;
  private left: number;

  constructor(o: GatherOptions) {
    this.fetch = o.fetch ?? globalThis.fetch.bind(globalThis);
    this.timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxBytes = o.maxBytes ?? DEFAULT_MAX_BYTES;
    this.left = o.maxRequests ?? DEFAULT_MAX_REQUESTS;
  }

  /** The body of a 200 answer. @throws TrustError naming the cause (budget, unreachable, timeout, status, size). */
  async get(
    url: string,
    init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: Uint8Array },
  ) {
    if (this.left <= 0) throw new TrustError(trustMsg('trust.budgetSpent'));
    this.left -= 1;
    const signal = AbortSignal.timeout(this.timeoutMs);
    let res: Response;
    try {
      res = await this.fetch(url, {
        method: init.method,
        headers: init.headers,
        ...(init.body ? { body: toArrayBuffer(init.body) } : {}),
        redirect: 'follow',
        signal,
      });
    } catch (e) {
      // The caller's address policy (a fetch that refuses private destinations) speaks for itself.
      if (e instanceof Error && e.name === 'AddressRefusedError')
        throw new TrustError(trustForeign(e.message));
      throw new TrustError(trustMsg('trust.unreachable', { problem: fetchProblem(e) }));
    }
    if (res.status !== 200) {
      await res.body?.cancel().catch(() => undefined);
      throw new TrustError(trustMsg('trust.http', { status: res.status }));
    }
    try {
      return await readBounded(res, this.maxBytes);
    } catch (e) {
      throw new TrustError(fetchProblem(e));
    }
  }
}

async function isSelfIssued(cert: pkijs.Certificate): Promise<boolean> {
  return cert.issuer.isEqual(cert.subject) && (await signedBy(cert, cert));
}

/**
 * The certificates the ResponderID names (RFC 6960 4.2.2.3): byName (the subject) or byKey (SHA-1 of the
 * subjectPublicKey BIT STRING value), each once.
 */
async function responderCandidates(
  responderId: unknown,
  pool: pkijs.Certificate[],
): Promise<pkijs.Certificate[]> {
  const out: pkijs.Certificate[] = [];
  for (const c of pool) {
    let named = false;
    if (responderId instanceof pkijs.RelativeDistinguishedNames) named = c.subject.isEqual(responderId);
    else if (responderId instanceof asn1js.OctetString) {
      const key = new Uint8Array(c.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView);
      named = equalBytes(await digest(key, 'SHA-1'), new Uint8Array(responderId.valueBlock.valueHexView));
    }
    if (named && !out.some((x) => sameCertificate(x, c))) out.push(c);
  }
  return out;
}

/**
 * Why `signer` cannot vouch for `basic` about certificates of `issuer`, or null when it can (RFC 6960 4.2.2.2):
 * its key verifies the signature, and it is the issuer itself or a certificate the issuer signed with the
 * id-kp-OCSPSigning EKU, valid at producedAt. The delegated responder's own revocation is not looked at (such
 * certificates carry id-pkix-ocsp-nocheck, RFC 6960 4.2.2.2.1).
 */
async function responderProblem(
  basic: pkijs.BasicOCSPResponse,
  signer: pkijs.Certificate,
  issuer: pkijs.Certificate,
): Promise<TrustMessage | null> {
  const data = basic.tbsResponseData;
  let signatureOk = false;
  try {
    signatureOk = await pkijs
      .getCrypto(true)
      .verifyWithPublicKey(
        data.tbsView.slice().buffer,
        basic.signature,
        signer.subjectPublicKeyInfo,
        basic.signatureAlgorithm,
      );
  } catch {
    signatureOk = false;
  }
  if (!signatureOk) return trustMsg('trust.ocspSignature');
  if (sameCertificate(signer, issuer)) return null;
  const name = subjectName(signer);
  if (!signer.issuer.isEqual(issuer.subject) || !(await signedBy(signer, issuer))) {
    return trustMsg('trust.notAnAuthority', { name });
  }
  if (!ekuIncludes(signer, OID.kpOcspSigning)) return trustMsg('trust.noOcspSigningEku', { name });
  const produced = data.producedAt.getTime();
  if (produced < signer.notBefore.value.getTime() || produced > signer.notAfter.value.getTime()) {
    return trustMsg('trust.responderNotValid', { name, at: data.producedAt.toISOString() });
  }
  return null;
}

function hasExtension(cert: pkijs.Certificate, oid: string): boolean {
  return cert.extensions?.some((x) => x.extnID === oid) ?? false;
}

function ekuIncludes(cert: pkijs.Certificate, purpose: string): boolean {
  const eku = cert.extensions?.find((x) => x.extnID === OID.extKeyUsage)?.parsedValue;
  return eku instanceof pkijs.ExtKeyUsage && eku.keyPurposes.includes(purpose);
}

/** Bit `bit` (RFC 5280 4.2.1.3 numbering: 5 keyCertSign, 6 cRLSign) of a KeyUsage extension. */
function keyUsageBit(extension: pkijs.Extension, bit: number): boolean {
  const parsed = asn1js.fromBER(extension.extnValue.valueBlock.valueHexView);
  if (!(parsed.result instanceof asn1js.BitString)) return false;
  const bytes = parsed.result.valueBlock.valueHexView;
  const byte = bytes[bit >> 3] ?? 0;
  return (byte & (0x80 >> (bit & 7))) !== 0;
}

function isCaCertificate(cert: pkijs.Certificate): boolean {
  const bc = cert.extensions?.find((x) => x.extnID === OID.basicConstraints)?.parsedValue;
  return bc instanceof pkijs.BasicConstraints && bc.cA === true;
}

/** http(s) URIs among GeneralNames (uniformResourceIdentifier is tag 6). */
function uris(names: pkijs.GeneralName[]): string[] {
  return names
    .filter((n) => n.type === 6 && typeof n.value === 'string' && /^https?:\/\//i.test(n.value))
    .map((n) => n.value as string);
}

/** AIA id-ad-ocsp URLs (RFC 5280 4.2.2.1). */
export function ocspUrls(cert: pkijs.Certificate): string[] {
  const aia = cert.extensions?.find((x) => x.extnID === OID.authorityInfoAccess)?.parsedValue;
  if (!(aia instanceof pkijs.InfoAccess)) return [];
  return uris(
    aia.accessDescriptions.filter((d) => d.accessMethod === OID.adOcsp).map((d) => d.accessLocation),
  );
}

/** AIA id-ad-caIssuers URLs (RFC 5280 4.2.2.1): where the certificate's issuer is published. */
export function caIssuersUrls(cert: pkijs.Certificate): string[] {
  const aia = cert.extensions?.find((x) => x.extnID === OID.authorityInfoAccess)?.parsedValue;
  if (!(aia instanceof pkijs.InfoAccess)) return [];
  return uris(
    aia.accessDescriptions.filter((d) => d.accessMethod === OID.adCaIssuers).map((d) => d.accessLocation),
  );
}

/** Most issuers `fetchMissingIssuers` adds to one chain (ICP-Brasil paths have one or two intermediates). */
export const MAX_FETCHED_ISSUERS = 4;

/**
 * `chain` (DER, leaf first) completed with the issuers it lacks, fetched from the AIA id-ad-caIssuers URLs of
 * its certificates (RFC 5280 4.2.2.1: a DER certificate, or a certs-only CMS of RFC 5652 whose certificates
 * are candidates): while a certificate that is not self-issued has no issuer in the chain, each of its URLs is
 * asked in turn, and a candidate is added only when its subject is that certificate's issuer and its key
 * verifies that certificate's signature; at most `MAX_FETCHED_ISSUERS` are added. Requests are bounded as
 * `gatherValidationMaterial`'s (`options`: the address policy's fetch, timeout, answer size, request count).
 * Returns the chain (the given certificates first, then those added) and, for a certificate whose issuer could
 * not be had, its subject and why. Never throws for network or answer errors.
 */
export async function fetchMissingIssuers(
  chain: readonly Uint8Array[],
  options: GatherOptions = {},
): Promise<{ chain: Uint8Array[]; missing: MissingRevocation[] }> {
  const out = [...chain];
  const certs = chain.map(parseCertificate).filter((c): c is pkijs.Certificate => c !== null);
  const fetcher = new BoundedFetcher(options);
  const missing: MissingRevocation[] = [];
  const asked = new Set<string>();
  // One certificate looked after per round, found or not: at most MAX_FETCHED_ISSUERS rounds.
  for (let round = 0; round < MAX_FETCHED_ISSUERS; round += 1) {
    let lacking: pkijs.Certificate | undefined;
    for (const c of certs) {
      if (asked.has(derKey(c)) || (await isSelfIssued(c)) || (await findIssuer(c, certs))) continue;
      lacking = c;
      break;
    }
    if (!lacking) break;
    asked.add(derKey(lacking));
    const problems: TrustMessage[] = [];
    let found: pkijs.Certificate | undefined;
    for (const url of caIssuersUrls(lacking)) {
      try {
        const der = await fetcher.get(url, {
          method: 'GET',
          headers: { accept: 'application/pkix-cert, application/pkcs7-mime' },
        });
        found = await findIssuer(lacking, issuerCandidates(der));
        if (found) break;
        throw new TrustError(trustMsg('trust.notTheIssuer'));
      } catch (e) {
        problems.push(trustMsg('trust.caIssuersAt', { url, problem: problemOf(e) }));
      }
    }
    if (!found) {
      const detail =
        problems.length > 0 ? trustMsg('trust.problems', { problems }) : trustMsg('trust.noCaIssuers');
      missing.push({ subject: subjectName(lacking), reason: trustText(detail), detail });
      continue;
    }
    certs.push(found);
    out.push(certificateDer(found));
  }
  return { chain: out, missing };
}

/** The certificates of a caIssuers answer: one DER certificate, or those of a certs-only CMS; none else. */
function issuerCandidates(der: Uint8Array): pkijs.Certificate[] {
  const single = parseCertificate(der);
  if (single) return [single];
  try {
    const info = pkijs.ContentInfo.fromBER(toArrayBuffer(der));
    const signed = new pkijs.SignedData({ schema: info.content });
    return (signed.certificates ?? []).filter((c): c is pkijs.Certificate => c instanceof pkijs.Certificate);
  } catch {
    return [];
  }
}

/** CRL distribution point full-name URLs (RFC 5280 4.2.1.13); points with a cRLIssuer (indirect) skipped. */
export function crlUrls(cert: pkijs.Certificate): string[] {
  const dps = cert.extensions?.find((x) => x.extnID === OID.crlDistributionPoints)?.parsedValue;
  if (!(dps instanceof pkijs.CRLDistributionPoints)) return [];
  const out: string[] = [];
  for (const dp of dps.distributionPoints) {
    if (dp.cRLIssuer || !Array.isArray(dp.distributionPoint)) continue;
    out.push(...uris(dp.distributionPoint));
  }
  return [...new Set(out)];
}

/** A certificate of a chain that the material says is revoked, as `firstRevoked` reports it. */
export interface RevokedCertificate {
  /** The certificate's subject, e.g. `O=Notary Test, CN=Notary Test Signer`. */
  subject: string;
  revokedAt: Date;
  reason?: string;
}

/**
 * The first certificate of `chain` (DER, any order) that `material` says is revoked at `at`, judged by
 * `revocationStatus` against its issuer found in `chain`; null when none is (self-issued certificates and
 * those whose issuer is not in `chain` are not judged). What a signer asks before handing out a signature.
 * @throws Error when a certificate of `chain` does not parse.
 */
export async function firstRevoked(
  chain: readonly Uint8Array[],
  material: ValidationMaterial,
  at: Date,
): Promise<RevokedCertificate | null> {
  const certs = chain.map((der) => ({ der, cert: pkijs.Certificate.fromBER(toArrayBuffer(der)) }));
  for (const { der, cert } of certs) {
    if (cert.issuer.isEqual(cert.subject)) continue;
    const issuer = certs.find((c) => c.cert.subject.isEqual(cert.issuer));
    if (!issuer) continue;
    const verdict = await revocationStatus(der, issuer.der, material, at);
    if (verdict.status === 'revoked') {
      return {
        subject: subjectName(cert),
        revokedAt: verdict.revokedAt,
        ...(verdict.reason ? { reason: verdict.reason } : {}),
      };
    }
  }
  return null;
}
