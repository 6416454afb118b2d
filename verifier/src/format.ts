import { renderSource, textOf } from './messages/index.ts';
import {
  type ActReport,
  type CheckReason,
  type CheckResult,
  type CheckStatus,
  isIncomplete,
  type VerifyOutcome,
  type VerifyReport,
} from './report.ts';
import { withBrasiliaTimes } from './time.ts';
import { logLines } from './transparency-log.ts';

const MARK: Readonly<Record<CheckStatus, string>> = {
  passed: 'PASSED',
  failed: 'FAILED',
  partial: 'PARTIAL',
  'not-run': 'NOT RUN',
};

/** The reason kinds of `report.ts` as a few words, after the status. */
const REASON: Readonly<Record<CheckReason, string>> = {
  'not-applicable': 'not applicable',
  'not-requested': 'not requested',
  pending: 'anchor pending',
  'no-endpoint': 'no endpoint given',
  unavailable: 'endpoint unavailable',
  'not-checked': 'a part not checked',
};

/** `NOT RUN (no endpoint given)`, `PARTIAL (endpoint unavailable)`, `PASSED`. */
export function statusText(check: Pick<CheckResult, 'status' | 'reason'>): string {
  return check.reason ? `${MARK[check.status]} (${REASON[check.reason]})` : MARK[check.status];
}

/**
 * The report as text for a terminal: one block per check (status with its reason kind, summary, evidence
 * with its source), then the verdict line, which names the exit status and what to do about an incomplete
 * verification. `verbose` false keeps only the evidence of failed checks and contradicting facts. Every time
 * is printed in Brasília time and UTC (`withBrasiliaTimes`); the `--json` report keeps RFC 3339 UTC.
 */
export function formatReport(report: VerifyReport, verbose = true): string {
  const lines: string[] = [
    `Document ${report.document.serialNumber} (${report.document.fileName}), SHA-256 ${report.document.sha256}`,
    `Issued by ${report.service.name} (${report.service.url})`,
    ...(report.act ? actLines(report.act) : []),
    ...(report.transparencyLog ? logLines(report.transparencyLog) : []),
    '',
  ];
  lines.push(...checksAndVerdict(report, verbose, (tally) => incompleteLine(report, tally)));
  return withBrasiliaTimes(`${lines.join('\n')}\n`, 'en');
}

/**
 * The notarial act's lines: its type, book and page, selo, and its MNE with what its check found (the date it
 * names, or what is wrong in it). Not a check: the MNE is confirmed at e-Notariado.
 */
function actLines(act: ActReport): string[] {
  const where = [act.book && `book ${act.book}`, act.page && `page ${act.page}`].filter(Boolean).join(', ');
  const lines = [`Notarial act: ${act.type}${where ? ` (${where})` : ''}, recorded ${act.recordedAt}`];
  if (act.selo) lines.push(`  selo ${act.selo.state} ${act.selo.code}`);
  if (act.mne !== null && act.mneCheck) {
    lines.push(
      act.mneCheck.valid
        ? `  MNE ${act.mne}: check digits and date (${act.mneCheck.date}) valid; confirm the act at e-Notariado`
        : `  MNE ${act.mne}: INVALID, ${act.mneCheck.problem}`,
    );
  }
  return lines;
}

/** A check as printed: a receipt's (`CheckResult`) or a web archive's. */
export type PrintedCheck = Pick<
  CheckResult,
  'status' | 'reason' | 'summary' | 'summaryMessage' | 'evidence'
> & {
  id: number;
  name: string;
};

/**
 * The lines every report prints after its facts: one block per check (`[id] name: status`, its summary, its
 * evidence with the source; `verbose` false keeps only evidence that failed), a blank line, then the verdict
 * with the tally and the exit status: VERIFIED (0), NOT VERIFIED at `failedAt` (1), or `incomplete(tally)` (3).
 */
export function checksAndVerdict(
  report: { checks: readonly PrintedCheck[]; outcome: VerifyOutcome; failedAt: number | null },
  verbose: boolean,
  incomplete: (tally: string) => string,
): string[] {
  const lines: string[] = [];
  for (const check of report.checks) {
    lines.push(`[${check.id}] ${check.name}: ${statusText(check)}`);
    // The command line speaks English: the texts from the English table (a report written before messages
    // has only its text).
    lines.push(`    ${textOf(check.summaryMessage, check.summary, 'en')}`);
    for (const e of check.evidence) {
      if (!verbose && e.ok !== false) continue;
      const mark = e.ok === undefined ? '-' : e.ok ? 'ok' : 'XX';
      const label = textOf(e.labelMessage, e.label, 'en');
      const value = textOf(e.valueMessage, e.value, 'en');
      lines.push(
        `    ${mark.padEnd(2)} ${label}: ${value}${e.source ? `  [${renderSource(e.source, 'en')}]` : ''}`,
      );
    }
  }
  const count = (f: (c: PrintedCheck) => boolean) => report.checks.filter(f).length;
  const tally =
    `${count((c) => c.status === 'passed')} passed, ${count((c) => c.status === 'partial')} partial, ` +
    `${count((c) => c.status === 'not-run' && isIncomplete(c))} not run, ` +
    `${count((c) => c.status === 'not-run' && !isIncomplete(c))} not applicable, ` +
    `${count((c) => c.status === 'failed')} failed`;
  lines.push('');
  switch (report.outcome) {
    case 'passed':
      lines.push(`VERIFIED: every applicable check passed (${tally}); exit status 0`);
      break;
    case 'failed':
      lines.push(`NOT VERIFIED: failed at check ${report.failedAt} (${tally}); exit status 1`);
      break;
    case 'incomplete':
      lines.push(incomplete(tally));
      break;
  }
  return lines;
}

/** A receipt's verdict when incomplete: which checks did not run in full and what would complete them. */
function incompleteLine(report: VerifyReport, tally: string): string {
  const open = report.checks.filter(isIncomplete);
  const reasons = new Set(open.map((c) => c.reason));
  const todo = [
    ...(reasons.has('no-endpoint') ? ['give an endpoint for each anchored chain'] : []),
    ...(reasons.has('unavailable') ? ['try again later or with other endpoints'] : []),
    ...(reasons.has('pending') ? ['fetch a newer receipt once the anchors are registered'] : []),
    ...(reasons.has('not-checked')
      ? ['give what the part not checked needs (e.g. --tsa-ca, --trust-ca)']
      : []),
  ];
  return (
    `INCOMPLETE: no check failed, but check${open.length === 1 ? '' : 's'} ` +
    `${open.map((c) => c.id).join(', ')} could not run in full (${tally}); exit status 3` +
    (todo.length > 0 ? `: ${todo.join('; ')}` : '')
  );
}
