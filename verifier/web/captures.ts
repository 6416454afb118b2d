/**
 * Web captures on the verify page: each `.wacz` chosen is checked on its own with `verifyWacz` (as
 * `notary-verify <capture.wacz>`; it needs no certificate or receipt beside it), the other files go to
 * `verifyBatch`, and the page shows, counts and downloads both as one result. Browser-safe, like the core.
 */
import {
  type BatchEntry,
  type BatchOutcome,
  type BatchResult,
  batchCsvRows,
  batchOutcome,
  CSV_COLUMNS,
  csvText,
} from '../src/batch.ts';
import { errorMessage } from '../src/error-message.ts';
import { EXIT_CODES, type ExitCode } from '../src/report.ts';
import { MAX_WACZ_BYTES, verifyWacz, WaczFormatError, type WaczReport } from '../src/wacz/index.ts';
import type { ChainItem } from './certidoes.ts';

/** Whether the page checks `name` as a web capture (`.wacz`, any case) rather than as a file or proof. */
export function isWacz(name: string): boolean {
  return /\.wacz$/i.test(name);
}

/**
 * Why a capture could not be checked: `too-large` (over `MAX_WACZ_BYTES`, refused before it is read),
 * `not-wacz` (not a zip with a `datapackage.json`), `unreadable` (reading or checking failed otherwise).
 */
export type CaptureProblemKind = 'too-large' | 'not-wacz' | 'unreadable';

/** One `.wacz` checked: its report, or why there is none. */
export interface CaptureItem {
  file: string;
  outcome: BatchOutcome;
  /** `notary-verify <file>`'s exit status: 0 verified, 1 failed, 2 unusable, 3 incomplete. */
  exitCode: ExitCode;
  /** Null when unusable. */
  report: WaczReport | null;
  problemKind: CaptureProblemKind | null;
  /** The core's message (English); null when there is a report. */
  problem: string | null;
}

/**
 * What the page shows and downloads as JSON: `verifyBatch`'s result for the other files (the same shape as
 * `notary-verify --dir --json`), the captures beside it, and the outcome, exit status and counts of all.
 */
export interface PageResult extends BatchResult {
  captures: CaptureItem[];
  /** The run chains of the certidões de permanência among the files (`certidoes.ts`). */
  chains: ChainItem[];
}

/** The trust anchors of checks 4 and 5 (`--trust-ca`, `--tsa-ca`), DER. */
export interface CaptureAnchors {
  trustCa?: Uint8Array[];
  tsaCa?: Uint8Array[];
}

/**
 * Checks each capture of `entries`, one at a time, in name order. Never throws: a capture that cannot be
 * checked is an unusable item. `onItem` is called after each (progress).
 */
export async function verifyCaptures(
  entries: readonly BatchEntry[],
  read: (name: string) => Promise<Uint8Array>,
  anchors: CaptureAnchors,
  onItem?: (item: CaptureItem) => void,
): Promise<CaptureItem[]> {
  const items: CaptureItem[] = [];
  for (const entry of [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const item = await verifyCapture(entry, read, anchors);
    items.push(item);
    onItem?.(item);
  }
  return items;
}

async function verifyCapture(
  entry: BatchEntry,
  read: (name: string) => Promise<Uint8Array>,
  anchors: CaptureAnchors,
): Promise<CaptureItem> {
  // The size is known before reading: a file past the bound is never read into memory.
  if (entry.size > MAX_WACZ_BYTES) {
    return unusable(entry.name, 'too-large', `${entry.name} is larger than ${MAX_WACZ_BYTES} bytes`);
  }
  try {
    const report = await verifyWacz(await read(entry.name), {
      ...(anchors.trustCa && anchors.trustCa.length > 0 ? { trustCa: anchors.trustCa } : {}),
      ...(anchors.tsaCa && anchors.tsaCa.length > 0 ? { tsaCa: anchors.tsaCa } : {}),
    });
    return {
      file: entry.name,
      outcome: report.outcome,
      exitCode: report.exitCode,
      report,
      problemKind: null,
      problem: null,
    };
  } catch (e) {
    const message = errorMessage(e);
    return unusable(entry.name, e instanceof WaczFormatError ? 'not-wacz' : 'unreadable', message);
  }
}

function unusable(file: string, kind: CaptureProblemKind, problem: string): CaptureItem {
  return {
    file,
    outcome: 'unusable',
    exitCode: EXIT_CODES.unusable,
    report: null,
    problemKind: kind,
    problem,
  };
}

/**
 * The page's result from the batch of the other files (null when every file was a capture) and the
 * captures: the batch's items and skipped files, the captures, and the outcome over all of them (see
 * `BatchResult.outcome`).
 */
export function pageResult(
  batch: BatchResult | null,
  captures: CaptureItem[],
  chains: ChainItem[] = [],
): PageResult {
  const items = batch?.items ?? [];
  return {
    items,
    skipped: batch?.skipped ?? [],
    captures,
    chains,
    ...batchOutcome([...items, ...captures, ...chains]),
  };
}

/** Where the capture's seventh check goes in the page's CSV: after `check_6`, before `problem`. */
const CHECK_7_AT = CSV_COLUMNS.indexOf('problem');

/** The columns of `pageCsv`: `batchCsv`'s, with `check_7` (a capture's record) before `problem`. */
export const PAGE_CSV_COLUMNS: readonly string[] = [
  ...CSV_COLUMNS.slice(0, CHECK_7_AT),
  'check_7',
  ...CSV_COLUMNS.slice(CHECK_7_AT),
];

/**
 * The page's result as CSV, as `batchCsv` writes it (RFC 4180; formula-looking fields neutralized), with a
 * `check_7` column: the batch's rows (`check_7` empty), then one row per capture, `proof_kind` `wacz`, its
 * file as its own proof, `sha256` the archive's, no serial number.
 */
export function pageCsv(result: PageResult): string {
  const rows = batchCsvRows(result).map((row) => [...row.slice(0, CHECK_7_AT), '', ...row.slice(CHECK_7_AT)]);
  for (const item of result.captures) {
    const r = item.report;
    const check = (id: number) => {
      const c = r?.checks.find((x) => x.id === id);
      return c ? (c.reason ? `${c.status}:${c.reason}` : c.status) : '';
    };
    rows.push([
      item.file,
      item.file,
      'wacz',
      item.outcome,
      String(item.exitCode),
      r?.failedAt ? String(r.failedAt) : '',
      '',
      r?.archive.sha256 ?? '',
      ...[1, 2, 3, 4, 5, 6, 7].map(check),
      item.problem ?? '',
    ]);
  }
  return csvText([[...PAGE_CSV_COLUMNS], ...rows]);
}
