/**
 * Judging the certificates a PAdES signature relies on (the signer's, each TSA's) at time T: a path to the
 * anchors (RFC 5280 6.1) and their revocation (RFC 6960 OCSP, RFC 5280 CRLs) from the file's /DSS (ETSI EN
 * 319 142-1 5.4.2) and, with `--online`, from the certificates' own responders; a proof of existence before
 * T (a valid timestamp) saves a certificate expired or revoked since.
 */
import { pkijs } from '@notary/trust/asn1';
import { toArrayBuffer } from '@notary/trust/bytes';
import { buildPath, derKey, isSelfSigned, pairs } from '@notary/trust/cert-path';
import { certificateDer, subjectName } from '@notary/trust/cms';
import {
  crlUrls,
  gatherValidationMaterial,
  ocspUrls,
  type RevocationVerdict,
  revocationStatus,
  type ValidationMaterial,
} from '@notary/trust/revocation';
import { errorMessage } from '../error-message.ts';
import { data, foreign, type Message, msg } from '../messages/index.ts';
import type { CheckBuilder } from '../report.ts';
import type { PadesCheckOptions } from './options.ts';

/** Most revocation look-ups one check makes (certificates × candidate times), a bound for hostile files. */
const MAX_REVOCATION_LOOKUPS = 400;

/** How a certificate fared at T (or at a proof of existence before it). */
export interface CertificateVerdict {
  /** true valid, false refused, null not judged (no anchors). */
  ok: boolean | null;
  /** The path from the certificate to its anchor (or to a self-signed certificate the file carries). */
  path: pkijs.Certificate[];
  /** Writes the verdict's evidence in `c`, its labels naming the certificate's `role`. */
  report(c: CheckBuilder, role: CertificateRole): void;
}

/**
 * A revocation verdict as the checks read it: the trust library's, or an unknown one whose reason is the
 * check's own (too many look-ups) or a library's error.
 */
type Verdict = Exclude<RevocationVerdict, { status: 'unknown' }> | { status: 'unknown'; detail: Message };

/** Whose certificate is judged: the signer's or a TSA's. */
export type CertificateRole = 'signer' | 'tsa';

/** The evidence labels of each role (what the certificate is, for a reader). */
const ROLE_LABELS: Readonly<
  Record<CertificateRole, { chainNotChecked: Message; status: Message; revocation: Message }>
> = {
  signer: {
    chainNotChecked: msg('pades.signerChainNotChecked'),
    status: msg('pades.signerStatus'),
    revocation: msg('pades.signerRevocation'),
  },
  tsa: {
    chainNotChecked: msg('pades.tsaChainNotChecked'),
    status: msg('pades.tsaStatus'),
    revocation: msg('pades.tsaRevocation'),
  },
};

/**
 * Judges certificates at T with the team's time rule: valid at T (chain, validity period, not revoked at or
 * before T), or else valid at a proof of existence t <= T from a valid timestamp covering the signature, with
 * notBefore <= t < min(notAfter, revocation time).
 */
export class Judge {
  private lookups = 0;
  private readonly fetched = new Map<string, ValidationMaterial>();
  /** Why `--online` got no usable revocation data for a certificate (by DER key): its responders' failures. */
  private readonly fetchProblems = new Map<string, Message>();
  /**
   * Certificates whose revocation at a time judged stays unknown because `--online` could not get it (a
   * responder unreachable, refusing, or answering what does not check out): subject to where and why. Not
   * evidence against the signature: check 6 is then partial (`CheckBuilder.partUnavailable`).
   */
  readonly unreachable = new Map<string, { source: string; reason: Message }>();
  private readonly cache = new Map<string, Promise<Verdict>>();

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

  /**
   * `cert` judged at `at`, else at each proof of existence of `poes` not after it, earliest first, against
   * `anchorsDer` (`anchorLabel`, `--trust-ca` or `--tsa-ca`, names them in the evidence; without anchors the
   * path is looked for, its trust not judged).
   */
  async certificate(
    cert: pkijs.Certificate,
    anchorsDer: Uint8Array[] | undefined,
    at: Date,
    poes: Date[],
    anchorLabel: '--trust-ca' | '--tsa-ca',
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
      return this.refused(msg('pades.anchorDoesNotParse', { error: errorMessage(e) }), anchorLabel);
    }
    const trusting = anchors.length > 0;
    // Without anchors the path still ends at a self-signed certificate the file carries: its revocation data
    // is looked for (the level), its trust is not judged.
    const pathAnchors = trusting ? anchors : this.pool.filter((x) => isSelfSigned(x));
    const { found, anyPath, lastMessage } = await this.validPath(cert, pathAnchors, at, times);
    const path = found?.path ?? anyPath;
    const described = found ? [found.at, ...times.filter((t) => t !== found?.at)] : times;
    const lines = await this.describeRevocation(path, described);
    const ok = found !== null;
    const trusted = !found
      ? null
      : found.at.getTime() === at.getTime()
        ? msg('chain.trustedAt', { at: at.toISOString() })
        : msg('pades.trustedByTimestamp', {
            at: found.at.toISOString(),
            judgedAt: at.toISOString(),
            why: lastMessage ?? msg('pades.notValid'),
          });
    const chainLabel = msg(anchorLabel === '--trust-ca' ? 'pades.chainToTrustCa' : 'pades.chainToTsaCa');
    return {
      ok: trusting ? ok : null,
      path,
      report: (c, role) => {
        const labels = ROLE_LABELS[role];
        if (trusting) {
          c.expect(
            ok,
            chainLabel,
            trusted ?? msg('pades.nameWhy', { name, why: lastMessage ?? msg('pades.noValidPath') }),
          );
        } else {
          c.skip(labels.chainNotChecked);
          if (!ok && lastMessage) c.note(labels.status, msg('pades.nameWhy', { name, why: lastMessage }));
        }
        for (const line of lines) c.note(labels.revocation, line);
      },
    };
  }

  /**
   * The first of `times` at which `cert` has a path to `pathAnchors` none of whose certificates is revoked
   * by then (`found`); else a path at any time (`anyPath`, for the evidence and the level) and why the last
   * time failed.
   */
  private async validPath(
    cert: pkijs.Certificate,
    pathAnchors: pkijs.Certificate[],
    at: Date,
    times: Date[],
  ): Promise<{
    found: { at: Date; path: pkijs.Certificate[] } | null;
    anyPath: pkijs.Certificate[];
    lastMessage: Message | null;
  }> {
    let lastMessage: Message | null = null;
    let found: { at: Date; path: pkijs.Certificate[] } | null = null;
    let anyPath: pkijs.Certificate[] = [cert];
    for (const t of times) {
      const chain = await buildPath(cert, this.pool, pathAnchors, t);
      if (!chain.path) {
        lastMessage = chain.detail;
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
    return { found, anyPath, lastMessage };
  }

  private refused(message: Message, anchorLabel: '--trust-ca' | '--tsa-ca'): CertificateVerdict {
    const label = msg(anchorLabel === '--trust-ca' ? 'pades.chainToTrustCa' : 'pades.chainToTsaCa');
    return { ok: false, path: [], report: (c) => c.fail(label, message) };
  }

  /** Why the path is not usable at `t` because of a revocation at or before `t`; null when it is not. */
  private async revokedAt(path: pkijs.Certificate[], t: Date): Promise<Message | null> {
    for (const [cert, issuer] of pairs(path)) {
      const v = await this.verdict(cert, issuer, t, true);
      if (v.status === 'revoked' && v.revokedAt.getTime() <= t.getTime()) return revokedMessage(cert, v);
    }
    return null;
  }

  /**
   * One evidence line per certificate of `path` (but its last): its revocation status at the first of `times`
   * the data speaks for, else at the first.
   */
  private async describeRevocation(path: pkijs.Certificate[], times: Date[]): Promise<Message[]> {
    const out: Message[] = [];
    for (const [cert, issuer] of pairs(path)) {
      let chosen: { v: Verdict; t: Date } | null = null;
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
      out.push(
        v.status === 'good'
          ? speaksFor(v, t)
            ? msg('pades.goodAt', {
                name: who,
                at: t.toISOString(),
                source: v.source,
                thisUpdate: v.thisUpdate.toISOString(),
              })
            : msg('pades.notRevokedAsOf', {
                name: who,
                thisUpdate: v.thisUpdate.toISOString(),
                source: v.source,
                at: t.toISOString(),
              })
          : v.status === 'revoked'
            ? msg('pades.nameWhy', { name: who, why: revokedMessage(null, v) })
            : msg('pades.unknownStatus', { name: who, reason: v.detail }),
      );
    }
    return out;
  }

  /** Certificates of `paths` for which `material` gives no verdict at any of `times`. */
  async missingRevocation(
    paths: pkijs.Certificate[][],
    material: ValidationMaterial,
    times: Date[],
  ): Promise<Message[]> {
    const missing: Message[] = [];
    const named = new Set<string>();
    for (const path of paths) {
      if (path.length < 2) {
        missing.push(
          msg('pades.noIssuerInFile', {
            name: path[0] ? subjectName(path[0]) : msg('pades.aCertificate'),
          }),
        );
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
        if (!known && !named.has(subjectName(cert))) {
          named.add(subjectName(cert));
          missing.push(data(subjectName(cert)));
        }
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
  ): Promise<Verdict> {
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
      if (problem && urls.length > 0) this.fetchProblems.set(key, problem.detail);
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
  ): Promise<Verdict> {
    const certDer = certificateDer(cert);
    const issuerDer = certificateDer(issuer);
    const key = `${materialKey(material)}|${derKey(cert)}|${derKey(issuer)}|${t.getTime()}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    if (++this.lookups > MAX_REVOCATION_LOOKUPS) {
      return Promise.resolve({ status: 'unknown', detail: msg('pades.tooManyLookups') });
    }
    const pending = revocationStatus(certDer, issuerDer, material, t).catch(
      (e: unknown): Verdict => ({ status: 'unknown', detail: foreign(errorMessage(e)) }),
    );
    this.cache.set(key, pending);
    return pending;
  }
}

/**
 * `cert` (when given) revoked as `v` says: when, why (the CRL or OCSP reason, when given) and from which
 * source (`ocsp`, `crl`).
 */
function revokedMessage(
  cert: pkijs.Certificate | null,
  v: Extract<RevocationVerdict, { status: 'revoked' }>,
): Message {
  const revoked = v.reason
    ? msg('pades.revokedAtWhy', { at: v.revokedAt.toISOString(), reason: v.reason, source: v.source })
    : msg('pades.revokedAt', { at: v.revokedAt.toISOString(), source: v.source });
  return cert ? msg('pades.nameRevoked', { name: subjectName(cert), revoked }) : revoked;
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
function speaksFor(v: Verdict, t: Date): boolean {
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
