/**
 * The verification report: one result per check, in order, each with its evidence, its status and, when it
 * did not simply pass or fail, the reason kind; then the outcome and the command line's exit status.
 *
 * Evidence and unavailability are kept apart: a check is `failed` only when what was read contradicts the
 * receipt (or two endpoints that answered disagree). An endpoint that could not be read (unreachable, 429,
 * 410, not the API, another chain) is not evidence: the check is `not-run` when none answered, `partial` when
 * others answered and agreed. A check that could not run is never `passed`.
 *
 * A check that has nothing to verify in this receipt (`reason: 'not-applicable'`: no EVM or Stacks leg, no
 * RFC 3161 token, no certificate given, an unsigned certificate) is `not-run` too, but it does not make the
 * verification incomplete: see `outcomeOf`.
 */

import { data, type Message, msg, render, sourceParam } from './messages/index.ts';
import type { MneCheck } from './mne.ts';
import type { LogReport } from './transparency-log.ts';

/** 1 file hash, 2 Merkle proof, 3 EVM attestation, 4 Stacks anchor, 5 RFC 3161 token, 6 PAdES signature. */
export type CheckId = 1 | 2 | 3 | 4 | 5 | 6;

export type CheckStatus = 'passed' | 'failed' | 'partial' | 'not-run';

/**
 * Why a check is `not-run` or `partial` (absent on `passed` and `failed`):
 * - `not-applicable` (not-run): the receipt or certificate has nothing this check verifies (the service does
 *   not anchor on that chain, no RFC 3161 token was issued, no certificate given, the certificate is not
 *   signed). Does not make the outcome incomplete.
 * - `not-requested` (not-run): the caller ran a subset (`VerifyInput.checks`, e.g. a page that runs only the
 *   network checks and merges the others from elsewhere). Does not make the outcome incomplete.
 * - `pending` (not-run): the receipt records the anchor as pending, or has no Merkle proof yet while a leg
 *   is pending: a later receipt will carry it.
 * - `no-endpoint` (not-run): the receipt has an anchor on a chain but no endpoint was given for it.
 * - `unavailable` (not-run or partial): endpoints were given, and none (not-run) or only some (partial) gave
 *   a usable answer; the evidence names each endpoint that did not, and why.
 * - `not-checked` (partial): a part of the check lacked what it needs (e.g. no trust anchor to check a
 *   certificate chain against) while the rest passed.
 */
export type CheckReason =
  | 'not-applicable'
  | 'not-requested'
  | 'pending'
  | 'no-endpoint'
  | 'unavailable'
  | 'not-checked';

/** The reasons a check can be `not-run` for. */
export type NotRunReason = Exclude<CheckReason, 'not-checked'>;

/**
 * The verification as a whole:
 * - `passed`: every applicable check passed (the others are `not-applicable` or `not-requested`);
 * - `failed`: a check failed (evidence contradicts the receipt);
 * - `incomplete`: none failed, but some applicable check could not run (`pending`, `no-endpoint`,
 *   `unavailable`) or ran in part (`partial`).
 */
export type VerifyOutcome = 'passed' | 'failed' | 'incomplete';

/**
 * `notary-verify`'s exit status: 0 passed, 1 failed, 2 unusable input (no report: bad arguments, unreadable
 * file, not a receipt), 3 incomplete.
 */
export const EXIT_CODES = { passed: 0, failed: 1, unusable: 2, incomplete: 3 } as const;
export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

/**
 * One fact the check established or refuted. `label` and `value` are English text (readable as they are);
 * `labelMessage` and `valueMessage` are the same texts as messages (`messages/`: a code and its data), from
 * which a reader renders them in another language. Reports written before messages have only the text.
 */
export interface Evidence {
  /** What was compared or read, e.g. `attestation.attester`. */
  label: string;
  /** What was found (and, on a mismatch, what was expected). */
  value: string;
  /** Where it was read: an endpoint URL, `file`, `receipt`, `certificate`. */
  source?: string;
  /** True: agrees with the receipt; false: contradicts it (the check fails); absent: informational. */
  ok?: boolean;
  /** `label` as a message (absent in reports written before messages). */
  labelMessage?: Message;
  /** `value` as a message (absent in reports written before messages). */
  valueMessage?: Message;
}

export interface CheckResult {
  id: CheckId;
  name: string;
  status: CheckStatus;
  /** Why it is `not-run` or `partial` (see `CheckReason`); absent when it passed or failed. */
  reason?: CheckReason;
  /** One line in English: why it passed, failed or did not run. */
  summary: string;
  /** `summary` as a message (absent in reports written before messages). */
  summaryMessage?: Message;
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
  /** Why the next level is not reached (empty at B-LTA), in English. */
  notHigher: string[];
  /** `notHigher` as messages, one for one (absent in reports written before messages). */
  notHigherMessages?: Message[];
  /** Document timestamps after the signature, and how many of them are valid. */
  documentTimestamps: number;
  validDocumentTimestamps: number;
  /** Whether missing revocation data could be fetched (`--online`). */
  online: boolean;
  /** The signature policy the signature declares (e.g. `AD-RB v1.3 (2.16.76.1.7.1.11.1.3)`), null when none. */
  policy: string | null;
  /**
   * Every signature of the certificate, oldest first (the service's, then the tabelião's when they signed
   * too), each judged on its own; the fields above are the newest one's. Absent in earlier reports.
   */
  signers?: PadesSignerReport[];
}

/** One signature of the certificate as check 6 judged it. */
export interface PadesSignerReport {
  /** Its position among the certificate's signatures, 1 the oldest. */
  index: number;
  /** The signer certificate's common name (else the signature dictionary's `/Name`); null when neither reads. */
  name: string | null;
  /** The signer certificate's subject (`CN=…, O=…, C=…`); null when the CMS does not read. */
  subject: string | null;
  /** The ICP-Brasil policy it declares (as `PadesReport.policy`), null when none. */
  policy: string | null;
  /** The level it reached; null when it failed. */
  level: PadesLevel | null;
  /** Its own verdict: `passed`, `failed` or `partial` (with `reason`), as a check's. */
  status: CheckStatus;
  reason?: CheckReason;
  /** Its one-line summary in English, and as a message. */
  summary: string;
  summaryMessage?: Message;
}

export interface VerifyReport {
  /** `passed`, `failed` or `incomplete` (see `VerifyOutcome`); what the report proves. */
  outcome: VerifyOutcome;
  /** `notary-verify`'s exit status for this report: 0 passed, 1 failed, 3 incomplete. */
  exitCode: ExitCode;
  /**
   * True when no check failed. Not "verified": an incomplete report is ok too; read `outcome`. Kept for the
   * readers of earlier reports.
   */
  ok: boolean;
  /** The first failed check, if any. */
  failedAt: CheckId | null;
  document: { serialNumber: string; sha256: string; fileName: string };
  service: { name: string; url: string };
  checks: CheckResult[];
  /**
   * The notarial act the receipt names (receipt version 2), absent when none: printed, not proven. `mneCheck`
   * says whether the MNE's date exists and its ISO 7064 MOD 97-10 check digits hold (`mne.ts`); it does not
   * change the outcome, which is about the file's proof: an MNE is confirmed at e-Notariado.
   */
  act?: ActReport;
  /** The receipt's transparency-log leaf as checked offline (receipt version 3); absent when it has none. */
  transparencyLog?: LogReport;
}

/** The notarial act of a receipt, as the report shows it. */
export interface ActReport {
  type: string;
  mne: string | null;
  /** Null when the act has no MNE; `problemMessage` is `problem` as a message (see `Evidence`). */
  mneCheck: MneCheck | null;
  selo: { state: string; code: string } | null;
  book: string | null;
  page: string | null;
  recordedAt: string;
}

export const CHECK_NAMES: Readonly<Record<CheckId, string>> = {
  1: 'file SHA-256',
  2: 'Merkle proof',
  3: 'EVM attestation (EAS)',
  4: 'Stacks anchor',
  5: 'RFC 3161 timestamp',
  6: 'certificate signature (PAdES)',
};

/** An evidence from its messages: the English texts rendered, the messages kept. */
export function evidenceOf(
  label: Message,
  value: Message,
  source: string | undefined,
  ok?: boolean,
): Evidence {
  return {
    label: render(label, 'en'),
    value: render(value, 'en'),
    ...(source ? { source } : {}),
    ...(ok === undefined ? {} : { ok }),
    labelMessage: label,
    valueMessage: value,
  };
}

/** A check's result with its summary as English text and as a message. */
function resultOf(
  id: CheckId,
  status: CheckStatus,
  reason: CheckReason | undefined,
  summary: Message,
  evidence: Evidence[],
): CheckResult {
  return {
    id,
    name: CHECK_NAMES[id],
    status,
    ...(reason ? { reason } : {}),
    summary: render(summary, 'en'),
    summaryMessage: summary,
    evidence,
  };
}

/**
 * Collects a check's evidence and decides its status: failed as soon as one piece contradicts the receipt.
 * Labels, values, skipped parts and reasons are messages (`messages/`); data goes in their parameters.
 */
export class CheckBuilder {
  readonly evidence: Evidence[] = [];
  private readonly problems: Message[] = [];
  private readonly skipped: Message[] = [];
  /** Endpoints that gave no usable answer (unreachable, rate-limited, gone, wrong kind), and why. */
  private readonly unavailableSources: { source: string; reason: Message }[] = [];
  /** Endpoints that answered (their answers are evidence, for or against). */
  private readonly answeredSources = new Set<string>();
  /** A part of the check could not run for lack of an answer (see `partUnavailable`). */
  private partsUnavailable = false;

  readonly id: CheckId;

  constructor(id: CheckId) {
    this.id = id;
  }

  /** Informational evidence. */
  note(label: Message, value: Message, source?: string): void {
    this.evidence.push(evidenceOf(label, value, source));
  }

  /** Evidence that must hold: `ok` false records the failure (`value` says what was found and expected). */
  expect(ok: boolean, label: Message, value: Message, source?: string): boolean {
    this.evidence.push(evidenceOf(label, value, source, ok));
    if (!ok) {
      this.problems.push(source ? msg('report.atSource', { label, source: sourceParam(source) }) : label);
    }
    return ok;
  }

  /** A failure that is not a comparison (an endpoint unreachable, something unparsable). */
  fail(label: Message, value: Message, source?: string): void {
    this.expect(false, label, value, source);
  }

  /** A part of the check that could not run (the check is then `partial` at best). */
  skip(what: Message): void {
    this.skipped.push(what);
    this.evidence.push(evidenceOf(msg('report.notChecked'), what, undefined));
  }

  /**
   * An endpoint that could not be read: unreachable, rate-limited (429), gone (410), of the wrong kind (a bare
   * node asked for an indexer route), or answering what is not the API. This is unavailability, not evidence
   * against the receipt: the check is `not-run` when no endpoint answered, `partial` when others answered.
   */
  unavailable(source: string, reason: Message): void {
    this.unavailableSources.push({ source, reason });
    this.evidence.push(evidenceOf(msg('report.endpointUnavailable'), reason, source));
  }

  /**
   * A part of the check that could not run because `source` gave no usable answer, while the rest ran on
   * other evidence (e.g. a revocation responder asked with `--online`, the signature checked from the file):
   * the check is `partial` with reason `unavailable` at worst, never failed for it.
   */
  partUnavailable(what: Message, source: string, reason: Message): void {
    this.partsUnavailable = true;
    this.skipped.push(msg('report.partUnavailable', { what, source, reason }));
    this.evidence.push(
      evidenceOf(msg('report.sourceUnavailable'), msg('report.whatReason', { what, reason }), source),
    );
  }

  /** Records that `source` answered: what it said is evidence (see `unavailable`). */
  answered(source: string): void {
    this.answeredSources.add(source);
  }

  /**
   * Takes `sub`'s evidence, its failures and its skipped parts, each label and part wrapped by `prefix`
   * (e.g. `signature timestamp: {label}`).
   */
  merge(sub: CheckBuilder, prefix: (inner: Message) => Message): void {
    for (const e of sub.evidence) {
      const label = prefix(e.labelMessage ?? data(e.label));
      this.evidence.push({ ...e, label: render(label, 'en'), labelMessage: label });
    }
    for (const p of sub.problems) this.problems.push(prefix(p));
    for (const s of sub.skipped) this.skipped.push(prefix(s));
    for (const u of sub.unavailableSources) this.unavailableSources.push(u);
    for (const a of sub.answeredSources) this.answeredSources.add(a);
    if (sub.partsUnavailable) this.partsUnavailable = true;
  }

  get failed(): boolean {
    return this.problems.length > 0;
  }

  /**
   * The result: `failed` if anything contradicted the receipt; else `not-run` (`unavailable`) when endpoints
   * were asked and none answered; else `partial` when a part was skipped (`not-checked`) or some endpoint or
   * source did not answer (`unavailable`); else `passed` with `summary`.
   */
  result(summary: Message): CheckResult {
    if (this.problems.length > 0) {
      return resultOf(
        this.id,
        'failed',
        undefined,
        msg('report.failed', { problems: unique(this.problems) }),
        this.evidence,
      );
    }
    const unavailable = unique(
      this.unavailableSources.map((u) => msg('report.sourceReason', { source: u.source, reason: u.reason })),
    );
    if (unavailable.length > 0 && this.answeredSources.size === 0) {
      return resultOf(
        this.id,
        'not-run',
        'unavailable',
        msg('report.noEndpointAnswered', { sources: unavailable }),
        this.evidence,
      );
    }
    const skipped = [...this.skipped];
    if (unavailable.length > 0) skipped.push(msg('report.noAnswerFrom', { sources: unavailable }));
    if (skipped.length > 0) {
      return resultOf(
        this.id,
        'partial',
        unavailable.length > 0 || this.partsUnavailable ? 'unavailable' : 'not-checked',
        msg('report.partlyChecked', { summary, skipped }),
        this.evidence,
      );
    }
    return resultOf(this.id, 'passed', undefined, summary, this.evidence);
  }
}

/** A check that did not run: `reason` its kind (see `CheckReason`), `why` the sentence shown. */
export function notRun(id: CheckId, reason: NotRunReason, why: Message): CheckResult {
  return resultOf(id, 'not-run', reason, why, []);
}

/**
 * Whether `check` keeps the verification from being complete: `partial`, or `not-run` for a reason other
 * than `not-applicable`/`not-requested` (a check from an earlier report without `reason` counts as
 * incomplete: it is never taken as passed).
 */
export function isIncomplete(check: Pick<CheckResult, 'status' | 'reason'>): boolean {
  if (check.status === 'partial') return true;
  if (check.status !== 'not-run') return false;
  return check.reason !== 'not-applicable' && check.reason !== 'not-requested';
}

/** The outcome, exit status and first failure of `checks` (see `VerifyOutcome`). */
export function outcomeOf(checks: readonly Pick<CheckResult, 'id' | 'status' | 'reason'>[]): {
  outcome: VerifyOutcome;
  exitCode: ExitCode;
  ok: boolean;
  failedAt: CheckId | null;
} {
  const failed = checks.find((c) => c.status === 'failed');
  const outcome: VerifyOutcome = failed ? 'failed' : checks.some(isIncomplete) ? 'incomplete' : 'passed';
  return { outcome, exitCode: EXIT_CODES[outcome], ok: failed === undefined, failedAt: failed?.id ?? null };
}

/** `items` without repetitions (equal code and parameters), in order. */
function unique(items: readonly Message[]): Message[] {
  const seen = new Set<string>();
  return items.filter((m) => {
    const key = JSON.stringify(m);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
