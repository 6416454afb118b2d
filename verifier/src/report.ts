/**
 * The verification report: one result per check, in the order, each with its evidence. A check that
 * could not run (no endpoint, nothing to check) is `not-run`, never `passed`; `partial` is a check whose
 * parts that could run passed while one part could not (e.g. a signature verified but no trust anchor given
 * to check its chain against).
 */

/** 1 file hash, 2 Merkle proof, 3 EVM attestation, 4 Stacks anchor, 5 RFC 3161 token, 6 PAdES signature. */
export type CheckId = 1 | 2 | 3 | 4 | 5 | 6;

export type CheckStatus = 'passed' | 'failed' | 'partial' | 'not-run';

/** One fact the check established or refuted. */
export interface Evidence {
  /** What was compared or read, e.g. `attestation.attester`. */
  label: string;
  /** What was found (and, on a mismatch, what was expected). */
  value: string;
  /** Where it was read: an endpoint URL, `file`, `receipt`, `certificate`. */
  source?: string;
  /** True: agrees with the receipt; false: contradicts it (the check fails); absent: informational. */
  ok?: boolean;
}

export interface CheckResult {
  id: CheckId;
  name: string;
  status: CheckStatus;
  /** One line: why it passed, failed or did not run. */
  summary: string;
  evidence: Evidence[];
  /** Check 6 only, when the certificate is signed: the PAdES level reached at the time judged. */
  pades?: PadesReport;
}

/** ETSI EN 319 142-1 baseline levels, lowest first. */
export type PadesLevel = 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';

/** Check 6's verdict on the PAdES level (ETSI EN 319 142-1 6.2 to 6.5). */
export interface PadesReport {
  /** The time T the signature was judged at, ISO 8601 UTC (`--at`, default now). */
  at: string;
  /** The level reached; null when the check failed or the SubFilter is not a PAdES baseline one. */
  level: PadesLevel | null;
  /** Why the next level is not reached (empty at B-LTA). */
  notHigher: string[];
  /** Document timestamps after the signature, and how many of them are valid. */
  documentTimestamps: number;
  validDocumentTimestamps: number;
  /** Whether missing revocation data could be fetched (`--online`). */
  online: boolean;
  /** The signature policy the signature declares (e.g. `AD-RB v1.3 (2.16.76.1.7.1.11.1.3)`), null when none. */
  policy: string | null;
}

export interface VerifyReport {
  /** True when no check failed (every check that could run passed). */
  ok: boolean;
  /** The first failed check, if any. */
  failedAt: CheckId | null;
  document: { serialNumber: string; sha256: string; fileName: string };
  service: { name: string; url: string };
  checks: CheckResult[];
}

export const CHECK_NAMES: Readonly<Record<CheckId, string>> = {
  1: 'file SHA-256',
  2: 'Merkle proof',
  3: 'EVM attestation (EAS)',
  4: 'Stacks anchor',
  5: 'RFC 3161 timestamp',
  6: 'certificate signature (PAdES)',
};

/** Collects a check's evidence and decides its status: failed as soon as one piece contradicts the receipt. */
export class CheckBuilder {
  readonly evidence: Evidence[] = [];
  private readonly problems: string[] = [];
  private readonly skipped: string[] = [];
  /** Endpoints that gave no usable answer (unreachable, rate-limited, gone, wrong kind): not evidence. */
  private readonly unavailableSources: string[] = [];
  /** Endpoints that answered (their answers are evidence, for or against). */
  private readonly answeredSources = new Set<string>();

  readonly id: CheckId;

  constructor(id: CheckId) {
    this.id = id;
  }

  /** Informational evidence. */
  note(label: string, value: string, source?: string): void {
    this.evidence.push({ label, value, ...(source ? { source } : {}) });
  }

  /** Evidence that must hold: `ok` false records the failure (`value` says what was found and expected). */
  expect(ok: boolean, label: string, value: string, source?: string): boolean {
    this.evidence.push({ label, value, ok, ...(source ? { source } : {}) });
    if (!ok) this.problems.push(source ? `${label} (${source})` : label);
    return ok;
  }

  /** A failure that is not a comparison (an endpoint unreachable, something unparsable). */
  fail(label: string, value: string, source?: string): void {
    this.expect(false, label, value, source);
  }

  /** A part of the check that could not run (the check is then `partial` at best). */
  skip(what: string): void {
    this.skipped.push(what);
    this.evidence.push({ label: 'not checked', value: what });
  }

  /**
   * An endpoint that could not be read: unreachable, rate-limited (429), gone (410), of the wrong kind (a bare
   * node asked for an indexer route), or answering what is not the API. This is unavailability, not evidence
   * against the receipt: the check is `not-run` when no endpoint answered, `partial` when others answered.
   */
  unavailable(source: string, reason: string): void {
    this.unavailableSources.push(source);
    this.evidence.push({ label: 'endpoint unavailable', value: reason, source });
  }

  /** Records that `source` answered: what it said is evidence (see `unavailable`). */
  answered(source: string): void {
    this.answeredSources.add(source);
  }

  /** Takes `sub`'s evidence with `prefix` on each label, its failures and its skipped parts. */
  merge(sub: CheckBuilder, prefix: string): void {
    for (const e of sub.evidence) this.evidence.push({ ...e, label: `${prefix}${e.label}` });
    for (const p of sub.problems) this.problems.push(`${prefix}${p}`);
    for (const s of sub.skipped) this.skipped.push(`${prefix}${s}`);
    for (const u of sub.unavailableSources) this.unavailableSources.push(u);
    for (const a of sub.answeredSources) this.answeredSources.add(a);
  }

  get failed(): boolean {
    return this.problems.length > 0;
  }

  /** The result: failed if anything failed, partial if a part was skipped, else passed with `summary`. */
  result(summary: string): CheckResult {
    const name = CHECK_NAMES[this.id];
    if (this.problems.length > 0) {
      return {
        id: this.id,
        name,
        status: 'failed',
        summary: `failed: ${unique(this.problems).join('; ')}`,
        evidence: this.evidence,
      };
    }
    if (this.unavailableSources.length > 0 && this.answeredSources.size === 0) {
      return {
        id: this.id,
        name,
        status: 'not-run',
        summary: `no endpoint answered: ${unique(this.unavailableSources).join(', ')}`,
        evidence: this.evidence,
      };
    }
    if (this.unavailableSources.length > 0) {
      this.skipped.push(`no answer from ${unique(this.unavailableSources).join(', ')}`);
    }
    if (this.skipped.length > 0) {
      return {
        id: this.id,
        name,
        status: 'partial',
        summary: `${summary}; not checked: ${this.skipped.join('; ')}`,
        evidence: this.evidence,
      };
    }
    return { id: this.id, name, status: 'passed', summary, evidence: this.evidence };
  }
}

/** A check that did not run, and why. */
export function notRun(id: CheckId, why: string): CheckResult {
  return { id, name: CHECK_NAMES[id], status: 'not-run', summary: why, evidence: [] };
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}
