import type { CheckStatus, VerifyReport } from './report.ts';

const MARK: Readonly<Record<CheckStatus, string>> = {
  passed: 'PASSED',
  failed: 'FAILED',
  partial: 'PARTIAL',
  'not-run': 'NOT RUN',
};

/**
 * The report as text for a terminal: one block per check (status, summary, evidence with its source), then
 * the verdict line. `verbose` false keeps only the evidence of failed checks and contradicting facts.
 */
export function formatReport(report: VerifyReport, verbose = true): string {
  const lines: string[] = [
    `Document ${report.document.serialNumber} (${report.document.fileName}), SHA-256 ${report.document.sha256}`,
    `Issued by ${report.service.name} (${report.service.url})`,
    '',
  ];
  for (const check of report.checks) {
    lines.push(`[${check.id}] ${check.name}: ${MARK[check.status]}`);
    lines.push(`    ${check.summary}`);
    for (const e of check.evidence) {
      if (!verbose && e.ok !== false) continue;
      const mark = e.ok === undefined ? '-' : e.ok ? 'ok' : 'XX';
      lines.push(`    ${mark.padEnd(2)} ${e.label}: ${e.value}${e.source ? `  [${e.source}]` : ''}`);
    }
  }
  const counts = (s: CheckStatus) => report.checks.filter((c) => c.status === s).length;
  const tally = `${counts('passed')} passed, ${counts('partial')} partial, ${counts('not-run')} not run, ${counts('failed')} failed`;
  lines.push('');
  lines.push(
    report.ok
      ? `VERIFIED: every check that could run passed (${tally})`
      : `NOT VERIFIED: failed at check ${report.failedAt} (${tally})`,
  );
  return `${lines.join('\n')}\n`;
}
