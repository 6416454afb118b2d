/**
 * Certidões de permanência on the verify page: each PDF chosen that carries a run chain (`monitor-chain.json`)
 * gets the check of `notary-verify chain <certidão.pdf>` beside whatever the batch does with it (a PDF is also a
 * notarized file, checked against its certificate when one is chosen with it). A PDF without the attachment is
 * not a certidão and gets no chain card. Browser-safe, like the core.
 */
import type { BatchEntry, BatchOutcome } from '../src/batch.ts';
import { type ChainReport, checkCertidaoChain } from '../src/monitor-chain.ts';
import { EXIT_CODES, type ExitCode } from '../src/report.ts';

/** Largest PDF read to look for a chain, bytes: a certidão is a few MiB at most (its runs are listed, not attached). */
export const MAX_CERTIDAO_BYTES = 64 * 1024 * 1024;

/** One certidão checked: its chain's report, and `notary-verify chain`'s outcome and exit status. */
export interface ChainItem {
  file: string;
  /** `passed` every link holds (exit 0), `failed` a break (exit 1). */
  outcome: BatchOutcome;
  exitCode: ExitCode;
  report: ChainReport;
}

/** Whether the page looks for a run chain in `name` (`.pdf`, any case). */
export function isPdf(name: string): boolean {
  return /\.pdf$/i.test(name);
}

/**
 * Checks the chain of each PDF of `entries` that carries one, in name order; PDFs past `MAX_CERTIDAO_BYTES` and
 * those without the attachment are left out. Never throws (a PDF that cannot be read is no certidão here: the
 * batch reports on it).
 */
export async function verifyCertidoes(
  entries: readonly BatchEntry[],
  read: (name: string) => Promise<Uint8Array>,
): Promise<ChainItem[]> {
  const items: ChainItem[] = [];
  const pdfs = entries.filter((e) => isPdf(e.name) && e.size <= MAX_CERTIDAO_BYTES);
  for (const entry of pdfs.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    let bytes: Uint8Array;
    try {
      bytes = await read(entry.name);
    } catch {
      continue;
    }
    const report = await checkCertidaoChain(bytes);
    if (!report.chain) continue;
    const holds = report.breaks.length === 0;
    items.push({
      file: entry.name,
      outcome: holds ? 'passed' : 'failed',
      exitCode: holds ? EXIT_CODES.passed : EXIT_CODES.failed,
      report,
    });
  }
  return items;
}
