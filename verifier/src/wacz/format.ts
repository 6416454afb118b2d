/** The signed web archive's report as text for a terminal (`notary-verify <capture.wacz>`). */
import { checksAndVerdict } from '../format.ts';
import { isIncomplete } from '../report.ts';
import { withBrasiliaTimes } from '../time.ts';
import type { WaczReport } from './types.ts';

/**
 * The WACZ report as text for a terminal: the archive and capture facts, one block per check (as
 * `formatReport` prints a receipt's), then the verdict with the exit status. Times in Brasília time and UTC.
 */
export function formatWaczReport(report: WaczReport, verbose = true): string {
  const a = report.archive;
  const lines = [`Web archive (WACZ), SHA-256 ${a.sha256}, ${a.bytes} bytes`];
  if (report.capture) {
    const k = report.capture;
    lines.push(
      `Capture of ${k.requestedUrl}, final URL ${k.finalUrl} (HTTP ${k.status ?? '?'}), ${k.startedAt} to ${k.finishedAt}`,
    );
    lines.push(
      `  server address ${k.serverIp ?? 'unknown'}; ${k.browser ?? 'browser unknown'}; title ${JSON.stringify(k.title)}`,
    );
    if (k.tls) {
      lines.push(
        `  main document TLS certificate: ${k.tls.subject}; issuer ${k.tls.issuer}; valid ${k.tls.validFrom} to ${k.tls.validTo}; SHA-256 ${k.tls.sha256Fingerprint}`,
      );
    }
  }
  if (a.form) {
    lines.push(
      `Signed (${a.form} form) by ${a.form === 'anonymous' ? `the key with SHA-256 ${a.signer}` : a.signer}, created ${a.created}` +
        (a.timeSignature ? `, time signature ${a.timeSignature}` : ', no verified time signature'),
    );
  }
  lines.push('');
  lines.push(
    ...checksAndVerdict(report, verbose, (tally) => {
      const open = report.checks.filter(isIncomplete).map((c) => c.id);
      return `INCOMPLETE: no check failed, but check${open.length === 1 ? '' : 's'} ${open.join(', ')} could not run in full (${tally}); exit status 3: give what the part not checked needs (--trust-ca, --tsa-ca)`;
    }),
  );
  return withBrasiliaTimes(`${lines.join('\n')}\n`, 'en');
}
