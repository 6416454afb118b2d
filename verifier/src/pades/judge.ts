/**
 * Judging the certificates a PAdES signature relies on (the signer's, each TSA's) at time T: a path to the
 * anchors (RFC 5280 6.1) and their revocation (RFC 6960 OCSP, RFC 5280 CRLs) from the file's /DSS (ETSI EN
 * 319 142-1 5.4.2) and, with `--online`, from the certificates' own responders; a proof of existence before
 * T (a valid timestamp) saves a certificate expired or revoked since.
 */
import * as pkijs from 'pkijs';
import { toArrayBuffer } from '../bytes.ts';
import { certificateDer, subjectName } from '../cms.ts';
import { errorMessage } from '../error-message.ts';
import type { CheckBuilder } from '../report.ts';
import {
  crlUrls,
  gatherValidationMaterial,
  ocspUrls,
  type RevocationVerdict,
  revocationStatus,
  type ValidationMaterial,
} from '../revocation.ts';
import type { PadesCheckOptions } from './options.ts';
import { buildPath, derKey, isSelfSigned, pairs } from './path.ts';

/** Most revocation look-ups one check makes (certificates × candidate times), a bound for hostile files. */
const MAX_REVOCATION_LOOKUPS = 400;

/** How a certificate fared at T (or at a proof of existence before it). */
export interface CertificateVerdict {
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
export class Judge {
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

  /**
   * `cert` judged at `at`, else at each proof of existence of `poes` not after it, earliest first, against
   * `anchorsDer` (`anchorLabel` names them in the evidence; without anchors the path is looked for, its trust
   * not judged).
   */
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
      return this.refused(`a trust anchor does not parse: ${errorMessage(e)}`, anchorLabel);
    }
    const trusting = anchors.length > 0;
    // Without anchors the path still ends at a self-signed certificate the file carries: its revocation data
    // is looked for (the level), its trust is not judged.
    const pathAnchors = trusting ? anchors : this.pool.filter((x) => isSelfSigned(x));
    const { found, anyPath, lastMessage } = await this.validPath(cert, pathAnchors, at, times);
    const path = found?.path ?? anyPath;
    const described = found ? [found.at, ...times.filter((t) => t !== found?.at)] : times;
    const lines: { label: string; value: string; ok?: boolean }[] = await this.describeRevocation(
      path,
      described,
    );
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
    lastMessage: string;
  }> {
    let lastMessage = '';
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
    return { found, anyPath, lastMessage };
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
