/**
 * The run chain of a certidão de permanência (`monitor-chain.json`, format `notary-monitor-chain/1`, attached to
 * the certidão as an associated file): each run of a monitoring records the SHA-256 of the previous run's WACZ
 * (inside the run's signed and anchored archive), so a run removed or two runs swapped break a link. Reads the
 * attachment and checks every link; browser-safe (no Node import).
 */
import {
  type ChainBreak,
  checkMonitorChain,
  type MonitorChain,
  MonitorChainSchema,
} from '@notary/shared/monitor';
import { extractAttachment } from './certificate.ts';
import { errorMessage } from './error-message.ts';
import { foreign, type Message, msg } from './messages/index.ts';

/** The chain's file name inside the certidão. */
export const MONITOR_CHAIN_FILE = 'monitor-chain.json';
/** Largest decoded chain read, bytes (a run is about 400 bytes; 100 000 runs at most). */
export const MAX_CHAIN_BYTES = 64 * 1024 * 1024;

/** What the check found. */
export interface ChainReport {
  /** The chain as attached; undefined when it could not be read. */
  chain: MonitorChain | undefined;
  /** The breaks found (empty: every link holds). */
  breaks: ChainBreak[];
  /** Why the chain could not be read; undefined when it was. */
  unreadable: string | undefined;
}

/** Reads and checks the chain attached to the certidão `pdf`; never throws. */
export async function checkCertidaoChain(pdf: Uint8Array): Promise<ChainReport> {
  let chain: MonitorChain;
  try {
    const attached = await extractAttachment(pdf, MONITOR_CHAIN_FILE, MAX_CHAIN_BYTES);
    chain = MonitorChainSchema.parse(JSON.parse(new TextDecoder().decode(attached.bytes)));
  } catch (e) {
    return { chain: undefined, breaks: [], unreadable: errorMessage(e) };
  }
  return { chain, breaks: checkMonitorChain(chain.runs), unreadable: undefined };
}

/** The report as text: one line per run, then the verdict. */
export function formatChainReport(report: ChainReport): string {
  if (!report.chain) return `monitor chain: UNREADABLE (${report.unreadable})\n`;
  const lines = [
    `monitoring ${report.chain.monitorId} of ${report.chain.url}: ${report.chain.runs.length} runs`,
  ];
  const broken = new Set(report.breaks.map((b) => b.run));
  for (const r of report.chain.runs) {
    const what = r.outcome === 'seen' ? 'seen' : `unavailable (${r.cause ?? 'no cause'})`;
    lines.push(
      `  run ${r.run} ${r.observedAt} ${what} ${r.serialNumber ?? '-'} ${r.waczSha256 ?? '-'}: ${broken.has(r.run) ? 'BREAK' : 'link OK'}`,
    );
  }
  for (const b of report.breaks) lines.push(`  BREAK at run ${b.run} (${b.kind}): ${b.message}`);
  lines.push(
    report.breaks.length === 0
      ? 'chain: OK, every run names the archive of the one before it'
      : 'chain: BROKEN, a run was removed, added or reordered',
  );
  return `${lines.join('\n')}\n`;
}

/** One run of the chain as the verify page shows it: its line and whether its link holds. */
export interface ChainRunLine {
  run: number;
  holds: boolean;
  line: Message;
}

/** The report as message codes (`messages/`), for the verify page: the summary, a line per run, the breaks, the verdict. */
export interface ChainMessages {
  summary: Message;
  runs: ChainRunLine[];
  breaks: Message[];
  verdict: Message;
}

/** `report` in message codes (rendered in either language); undefined `summary` parts when the chain is unreadable. */
export function chainMessages(report: ChainReport): ChainMessages {
  const chain = report.chain;
  if (!chain) {
    const verdict = msg('chain.unreadable', { error: foreign(report.unreadable ?? '') });
    return { summary: verdict, runs: [], breaks: [], verdict };
  }
  const none = msg('chain.none');
  const broken = new Set(report.breaks.map((b) => b.run));
  const runs = chain.runs.map((r): ChainRunLine => {
    const common = {
      run: r.run,
      time: r.observedAt,
      serial: r.serialNumber ?? '-',
      hash: r.waczSha256 ?? '-',
    };
    return {
      run: r.run,
      holds: !broken.has(r.run),
      line:
        r.outcome === 'seen'
          ? msg('chain.run.seen', common)
          : msg('chain.run.unavailable', { ...common, cause: r.cause ?? '-' }),
    };
  });
  const breaks = report.breaks.map((b): Message => {
    if (b.kind === 'numbering') return msg('chain.break.numbering', { run: b.run, place: b.place ?? 0 });
    if (b.named === undefined) return msg('chain.break.noHash', { run: b.run });
    return msg('chain.break.link', { run: b.run, named: b.named ?? none, expected: b.expected ?? none });
  });
  return {
    summary: msg('chain.summary', { monitorId: chain.monitorId, url: chain.url, count: chain.runs.length }),
    runs,
    breaks,
    verdict: report.breaks.length === 0 ? msg('chain.ok') : msg('chain.broken'),
  };
}
