/**
 * Batch verification: many files, each beside its proof, checked one after the other with the same endpoints
 * and trust anchors (`notary-verify --dir folder/`, and the verify page given several files at once).
 * Platform-neutral: the caller lists the files and reads them (a folder in Node, `File`s in a browser).
 *
 * A file's proof is found by name, then by content:
 * - `<name>.certificate.pdf` beside `<name>`: the certificate (its attached receipt is used);
 * - `<name>.receipt.json` beside `<name>`: the receipt (when both are there, the certificate is used);
 * - a certificate alone (`<name>.certificate.pdf` without `<name>`, or any other PDF carrying a
 *   `receipt.json`): the file its receipt names (`document.fileName`) when that file is there; else, when the
 *   certificate is stamped (the original PDF followed by an incremental update), the original is its first
 *   `document.fileSize` bytes;
 * - a proof whose file is missing is reported unusable; a file with no proof is listed as skipped.
 */
import { type AttachedReceipt, CertificateError, extractReceipt } from './certificate.ts';
import { parseReceipt, type Receipt, ReceiptFormatError } from './receipt.ts';
import {
  type CheckId,
  type CheckResult,
  EXIT_CODES,
  type ExitCode,
  isIncomplete,
  type VerifyOutcome,
  type VerifyReport,
} from './report.ts';
import { type VerifyInput, verify } from './verify.ts';

/** A certificate named for the file it certifies: `contrato.pdf.certificate.pdf`. */
export const CERTIFICATE_SUFFIX = '.certificate.pdf';
/** A receipt named for the file it certifies: `contrato.pdf.receipt.json`. */
export const RECEIPT_SUFFIX = '.receipt.json';
/** Most files a batch lists (a folder with more is refused before anything is read). */
export const MAX_BATCH_ENTRIES = 10_000;
/**
 * Largest file read: the service's upload limit (spec, Limits: 250 MB) plus what a stamped certificate adds;
 * bytes.
 */
export const MAX_BATCH_FILE_BYTES = (250 + 16) * 1024 * 1024;

/** One file of the batch, as listed by the caller. */
export interface BatchEntry {
  /** The file's name (no directory). */
  name: string;
  /** Bytes. */
  size: number;
}

/** The files of a batch and how to read them. */
export interface BatchSource {
  entries: readonly BatchEntry[];
  /**
   * The bytes of the entry `name`.
   * @throws whatever reading fails with (the item is then reported unusable with its message).
   */
  read(name: string): Promise<Uint8Array>;
}

/** An item's outcome: the report's (`passed`, `failed`, `incomplete`), or `unusable` (no report). */
export type BatchOutcome = VerifyOutcome | 'unusable';

/** How the item's proof was given. */
export type ProofKind = 'certificate' | 'receipt' | 'stamped-certificate';

/** One file checked against its proof. */
export interface BatchItem {
  /** The file checked; for a stamped certificate alone, the certificate (its first bytes are the file). */
  file: string;
  /** The certificate or receipt it was checked against. */
  proof: string;
  proofKind: ProofKind;
  outcome: BatchOutcome;
  /** `notary-verify`'s exit status for this item alone: 0 passed, 1 failed, 2 unusable, 3 incomplete. */
  exitCode: ExitCode;
  /** Null when unusable. */
  report: VerifyReport | null;
  /** Why the item is unusable: its kind (see `ProblemKind`) and the message (English); null otherwise. */
  problemKind: ProblemKind | null;
  problem: string | null;
}

/**
 * Why an item could not be checked: `file-missing` (the proof's file is not in the batch), `too-large`
 * (over `MAX_BATCH_FILE_BYTES`), `unreadable` (reading failed), `no-receipt` (a PDF that is not a readable
 * certificate with a receipt), `bad-receipt` (a receipt this version does not read).
 */
export type ProblemKind = 'file-missing' | 'too-large' | 'unreadable' | 'no-receipt' | 'bad-receipt';

/** A file larger than `MAX_BATCH_FILE_BYTES`. */
class TooLargeError extends Error {
  override name = 'TooLargeError';
}

/** A file of the batch that was not checked, and why (`no-proof`, or `proof-unused`: another proof was used). */
export interface BatchSkipped {
  name: string;
  why: 'no-proof' | 'proof-unused';
}

export interface BatchResult {
  items: BatchItem[];
  skipped: BatchSkipped[];
  /**
   * The batch as a whole: `failed` when an item failed; else `unusable` when an item could not be checked
   * (or there was nothing to check); else `incomplete` when an item is; else `passed`.
   */
  outcome: BatchOutcome;
  /** The exit status of `notary-verify --dir`: the outcome's (0, 1, 2, 3). */
  exitCode: ExitCode;
  counts: Record<BatchOutcome, number>;
}

/** What every item is checked with: `verify`'s input without the file and its proof. */
export type BatchVerifyOptions = Omit<VerifyInput, 'file' | 'receipt' | 'certificate' | 'attachedReceipt'>;

export interface BatchOptions {
  /**
   * Pair the one file left without proof with the one proof left without its file, whatever their names (the
   * page: someone picks `contrato.pdf` and `certificado-ABC.pdf`). Default false.
   */
  pairLeftovers?: boolean;
  /** Called after each item (progress). */
  onItem?: (item: BatchItem, done: number, total: number) => void;
}

/** The files a batch would check, by name only (see the module comment); certificates alone are read later. */
interface Plan {
  pairs: { file: string; proof: string; kind: 'certificate' | 'receipt' }[];
  /** PDFs that may carry a receipt: `named` when called `<x>.certificate.pdf` (then a receipt is expected). */
  candidates: { name: string; named: boolean }[];
  /** Receipts named for a file that is not there. */
  orphanReceipts: string[];
  /** Files without proof so far. */
  leftovers: string[];
  skipped: BatchSkipped[];
}

/**
 * Verifies every file of `source` that has a proof (see the module comment), one at a time.
 * @throws RangeError when the source lists more than `MAX_BATCH_ENTRIES` files. Anything else (an unreadable
 *   file, a PDF without receipt, a receipt this version does not read) is an unusable item, not an exception.
 */
export async function verifyBatch(
  source: BatchSource,
  verifyOptions: BatchVerifyOptions,
  options: BatchOptions = {},
): Promise<BatchResult> {
  if (source.entries.length > MAX_BATCH_ENTRIES) {
    throw new RangeError(`more than ${MAX_BATCH_ENTRIES} files: verify them in smaller folders`);
  }
  const sizes = new Map(source.entries.map((e) => [e.name, e.size]));
  const read = async (name: string): Promise<Uint8Array> => {
    const size = sizes.get(name) ?? 0;
    if (size > MAX_BATCH_FILE_BYTES)
      throw new TooLargeError(`${name} is larger than ${MAX_BATCH_FILE_BYTES} bytes`);
    return source.read(name);
  };
  const plan = planBatch(source.entries.map((e) => e.name));
  const items: BatchItem[] = [];
  const pending: (() => Promise<BatchItem>)[] = [];
  const leftovers = new Set(plan.leftovers);
  /** Proofs whose file is not there: a certificate (with its receipt), or a receipt (`attached` null). */
  const unpaired: { proof: string; attached: AttachedReceipt | null }[] = [];

  for (const pair of plan.pairs) {
    pending.push(() => checkPair(read, pair.file, pair.proof, pair.kind, verifyOptions));
  }
  // A PDF may be a certificate whatever its name: each is read once for its receipt, before any is paired
  // (the file a certificate names may be another PDF of the batch).
  const certificates: { name: string; attached: AttachedReceipt; receipt: Receipt; stamped: boolean }[] = [];
  for (const { name, named } of plan.candidates) {
    try {
      const bytes = await read(name);
      const attached = await extractReceipt(bytes);
      const receipt = parseReceipt(new TextDecoder('utf-8', { fatal: false }).decode(attached.bytes));
      certificates.push({ name, attached, receipt, stamped: looksStamped(bytes, receipt.document.fileSize) });
    } catch (e) {
      // Any other PDF is just a file (perhaps one with a proof of its own beside it).
      if (!named && e instanceof CertificateError) leftovers.add(name);
      else pending.push(async () => unusable(name, name, 'certificate', e));
    }
  }
  for (const { name, attached, receipt, stamped } of certificates) {
    const fileName = receipt.document.fileName;
    if (fileName !== name && leftovers.delete(fileName)) {
      pending.push(() => checkPair(read, fileName, name, 'certificate', verifyOptions, attached));
    } else if (stamped) {
      const size = receipt.document.fileSize;
      pending.push(() => checkStampedAlone(read, name, size, attached, verifyOptions));
    } else {
      unpaired.push({ proof: name, attached });
    }
  }
  // A receipt named otherwise than its file: the file it names, if there.
  for (const name of plan.orphanReceipts) {
    let receipt: Receipt;
    try {
      receipt = parseReceipt(new TextDecoder().decode(await read(name)));
    } catch (e) {
      pending.push(async () => unusable(name, name, 'receipt', e));
      continue;
    }
    const fileName = receipt.document.fileName;
    if (leftovers.delete(fileName))
      pending.push(() => checkPair(read, fileName, name, 'receipt', verifyOptions));
    else unpaired.push({ proof: name, attached: null });
  }
  const [lone] = leftovers;
  const [loneProof] = unpaired;
  if (options.pairLeftovers && leftovers.size === 1 && unpaired.length === 1 && lone && loneProof) {
    leftovers.clear();
    unpaired.length = 0;
    const attached = loneProof.attached;
    pending.push(() =>
      attached
        ? checkPair(read, lone, loneProof.proof, 'certificate', verifyOptions, attached)
        : checkPair(read, lone, loneProof.proof, 'receipt', verifyOptions),
    );
  }
  for (const u of unpaired) {
    const kind = u.attached ? 'certificate' : 'receipt';
    const why = u.attached
      ? 'the file this certificate names is not beside it, and the certificate is not a stamped PDF that holds it'
      : 'the file this receipt names is not beside it';
    pending.push(async () => unusable(u.proof, u.proof, kind, { kind: 'file-missing', message: why }));
  }
  for (const run of pending) {
    const item = await run();
    items.push(item);
    options.onItem?.(item, items.length, pending.length);
  }
  const skipped = [
    ...plan.skipped,
    ...[...leftovers].map((name): BatchSkipped => ({ name, why: 'no-proof' })),
  ].sort((a, b) => compareNames(a.name, b.name));
  items.sort((a, b) => compareNames(a.file, b.file) || compareNames(a.proof, b.proof));
  return { items, skipped, ...batchOutcome(items) };
}

/** The pairs of `names` found by name alone, and what is left to read (see the module comment). */
export function planBatch(names: readonly string[]): Plan {
  const all = new Set(names);
  const used = new Set<string>();
  const pairs: Plan['pairs'] = [];
  const candidates: Plan['candidates'] = [];
  const orphanReceipts: string[] = [];
  const skipped: BatchSkipped[] = [];
  const sorted = [...all].sort(compareNames);
  for (const name of sorted) {
    if (!name.endsWith(CERTIFICATE_SUFFIX)) continue;
    const file = name.slice(0, -CERTIFICATE_SUFFIX.length);
    if (file !== '' && all.has(file)) {
      pairs.push({ file, proof: name, kind: 'certificate' });
      used.add(file).add(name);
      const receipt = `${file}${RECEIPT_SUFFIX}`;
      if (all.has(receipt)) {
        used.add(receipt);
        skipped.push({ name: receipt, why: 'proof-unused' });
      }
    } else {
      candidates.push({ name, named: true });
      used.add(name);
    }
  }
  for (const name of sorted) {
    if (used.has(name) || !name.endsWith(RECEIPT_SUFFIX)) continue;
    const file = name.slice(0, -RECEIPT_SUFFIX.length);
    used.add(name);
    if (file !== '' && all.has(file) && !used.has(file)) {
      pairs.push({ file, proof: name, kind: 'receipt' });
      used.add(file);
    } else {
      orphanReceipts.push(name);
    }
  }
  const leftovers: string[] = [];
  for (const name of sorted) {
    if (used.has(name)) continue;
    if (/\.pdf$/i.test(name)) candidates.push({ name, named: false });
    else leftovers.push(name);
  }
  return { pairs, candidates, orphanReceipts, leftovers, skipped };
}

/**
 * Whether `certificate` looks like a stamped PDF of a `size`-byte original: longer than it, and its first
 * `size` bytes end as a PDF revision does (`%%EOF`, then at most an end of line). Check 1 then tells whether
 * those bytes are the notarized file.
 */
export function looksStamped(certificate: Uint8Array, size: number): boolean {
  if (size < 8 || certificate.length <= size) return false;
  const tail = new TextDecoder('latin1').decode(certificate.subarray(Math.max(0, size - 32), size));
  return /%%EOF[\r\n \t\f\0]*$/.test(tail);
}

async function checkPair(
  read: (name: string) => Promise<Uint8Array>,
  file: string,
  proof: string,
  kind: 'certificate' | 'receipt',
  options: BatchVerifyOptions,
  attachedReceipt?: AttachedReceipt,
): Promise<BatchItem> {
  try {
    const fileBytes = await read(file);
    const proofBytes = await read(proof);
    const report = await verify({
      ...options,
      file: fileBytes,
      ...(kind === 'receipt'
        ? { receipt: new TextDecoder().decode(proofBytes) }
        : { certificate: proofBytes, ...(attachedReceipt ? { attachedReceipt } : {}) }),
    });
    return reported(file, proof, kind, report);
  } catch (e) {
    return unusable(file, proof, kind, e);
  }
}

async function checkStampedAlone(
  read: (name: string) => Promise<Uint8Array>,
  certificate: string,
  size: number,
  attachedReceipt: AttachedReceipt,
  options: BatchVerifyOptions,
): Promise<BatchItem> {
  try {
    const bytes = await read(certificate);
    const report = await verify({
      ...options,
      file: bytes.subarray(0, size),
      certificate: bytes,
      attachedReceipt,
    });
    return reported(certificate, certificate, 'stamped-certificate', report);
  } catch (e) {
    return unusable(certificate, certificate, 'stamped-certificate', e);
  }
}

function reported(file: string, proof: string, proofKind: ProofKind, report: VerifyReport): BatchItem {
  return {
    file,
    proof,
    proofKind,
    outcome: report.outcome,
    exitCode: report.exitCode,
    report,
    problemKind: null,
    problem: null,
  };
}

/** An unusable item: `cause` is what was thrown (classified) or the problem itself. */
function unusable(
  file: string,
  proof: string,
  proofKind: ProofKind,
  cause: unknown | { kind: ProblemKind; message: string },
): BatchItem {
  const { kind, message } = problemOf(cause);
  return {
    file,
    proof,
    proofKind,
    outcome: 'unusable',
    exitCode: EXIT_CODES.unusable,
    report: null,
    problemKind: kind,
    problem: message,
  };
}

function problemOf(e: unknown): { kind: ProblemKind; message: string } {
  if (e instanceof CertificateError) return { kind: 'no-receipt', message: e.message };
  if (e instanceof ReceiptFormatError) return { kind: 'bad-receipt', message: e.message };
  if (e instanceof TooLargeError) return { kind: 'too-large', message: e.message };
  if (e instanceof Error) return { kind: 'unreadable', message: e.message };
  if (typeof e === 'object' && e !== null && 'kind' in e && 'message' in e) {
    return e as { kind: ProblemKind; message: string };
  }
  return { kind: 'unreadable', message: String(e) };
}

/** The batch's outcome, exit status and counts (see `BatchResult.outcome`). */
export function batchOutcome(items: readonly Pick<BatchItem, 'outcome'>[]): {
  outcome: BatchOutcome;
  exitCode: ExitCode;
  counts: Record<BatchOutcome, number>;
} {
  const counts: Record<BatchOutcome, number> = { passed: 0, failed: 0, incomplete: 0, unusable: 0 };
  for (const item of items) counts[item.outcome] += 1;
  const outcome: BatchOutcome =
    counts.failed > 0
      ? 'failed'
      : counts.unusable > 0 || items.length === 0
        ? 'unusable'
        : counts.incomplete > 0
          ? 'incomplete'
          : 'passed';
  return { outcome, exitCode: EXIT_CODES[outcome], counts };
}

/** The columns of `batchCsv`. */
export const CSV_COLUMNS = [
  'file',
  'proof',
  'proof_kind',
  'outcome',
  'exit_code',
  'failed_at',
  'serial_number',
  'sha256',
  'check_1',
  'check_2',
  'check_3',
  'check_4',
  'check_5',
  'check_6',
  'problem',
] as const;

/**
 * The batch as CSV (RFC 4180: CRLF line ends, fields quoted when they hold a comma, quote or line end), one
 * row per item then one per skipped file; a check column holds its status, with its reason after a colon
 * (`not-run:no-endpoint`). A field that a spreadsheet would run as a formula (starting with `=`, `+`, `-`,
 * `@`, tab or carriage return) gets a leading `'` (OWASP, CSV injection): file names are the batch's, not ours.
 */
export function batchCsv(result: BatchResult): string {
  return csvText([[...CSV_COLUMNS], ...batchCsvRows(result)]);
}

/** The rows of `batchCsv` without its header: one per item, then one per skipped file (`CSV_COLUMNS`). */
export function batchCsvRows(result: BatchResult): string[][] {
  const rows: string[][] = [];
  for (const item of result.items) {
    const r = item.report;
    const check = (id: CheckId) => {
      const c: CheckResult | undefined = r?.checks.find((x) => x.id === id);
      return c ? (c.reason ? `${c.status}:${c.reason}` : c.status) : '';
    };
    rows.push([
      item.file,
      item.proof,
      item.proofKind,
      item.outcome,
      String(item.exitCode),
      r?.failedAt ? String(r.failedAt) : '',
      r?.document.serialNumber ?? '',
      r?.document.sha256 ?? '',
      check(1),
      check(2),
      check(3),
      check(4),
      check(5),
      check(6),
      item.problem ?? '',
    ]);
  }
  for (const s of result.skipped) {
    rows.push([s.name, '', '', `skipped:${s.why}`, '', '', '', '', '', '', '', '', '', '', '']);
  }
  return rows;
}

/** `rows` as CSV text, each field as `batchCsv` writes it (RFC 4180, formula-looking fields neutralized). */
export function csvText(rows: readonly (readonly string[])[]): string {
  return rows
    .map((row) => row.map(csvField).join(','))
    .join('\r\n')
    .concat('\r\n');
}

function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

const OUTCOME_MARK: Readonly<Record<BatchOutcome, string>> = {
  passed: 'VERIFIED',
  failed: 'FAILED',
  incomplete: 'INCOMPLETE',
  unusable: 'UNUSABLE',
};

/** The batch for a terminal: one line per item (outcome, file, proof, why), the skipped files, the tally. */
export function formatBatchSummary(result: BatchResult): string {
  const lines: string[] = [];
  for (const item of result.items) {
    const proof =
      item.proofKind === 'stamped-certificate' ? 'stamped certificate' : `${item.proofKind} ${item.proof}`;
    const why =
      item.problem ??
      (item.report?.failedAt
        ? `failed at check ${item.report.failedAt}`
        : item.outcome === 'incomplete'
          ? `not run or partial: ${incompleteChecks(item.report)}`
          : `serial ${item.report?.document.serialNumber ?? '?'}`);
    lines.push(`${OUTCOME_MARK[item.outcome].padEnd(10)} ${item.file}  (${proof}): ${why}`);
  }
  for (const s of result.skipped) {
    lines.push(
      `${'SKIPPED'.padEnd(10)} ${s.name}: ${s.why === 'no-proof' ? 'no certificate or receipt beside it' : 'the certificate beside the same file is used'}`,
    );
  }
  const c = result.counts;
  lines.push('');
  lines.push(
    `${result.items.length} checked: ${c.passed} verified, ${c.failed} failed, ${c.incomplete} incomplete, ` +
      `${c.unusable} unusable; ${result.skipped.length} skipped`,
  );
  return `${lines.join('\n')}\n`;
}

function incompleteChecks(report: VerifyReport | null): string {
  if (!report) return '';
  return report.checks
    .filter(isIncomplete)
    .map((c) => `${c.id}${c.reason ? ` (${c.reason})` : ''}`)
    .join(', ');
}

/** Names in code-point order (the same order on every machine, unlike a locale's collation). */
function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
