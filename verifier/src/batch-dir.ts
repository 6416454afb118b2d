/**
 * `notary-verify --dir folder/`: every file of a folder that has a proof beside it (see `batch.ts`), checked
 * with the same endpoints and trust anchors; a summary on the terminal and a CSV file. Node only (reads the
 * folder, writes the CSV).
 */
import { opendir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  type BatchEntry,
  type BatchVerifyOptions,
  batchCsv,
  formatBatchSummary,
  MAX_BATCH_ENTRIES,
  verifyBatch,
} from './batch.ts';
import { errorMessage } from './error-message.ts';
import { EXIT_CODES, type ExitCode } from './report.ts';

/** Where the CSV goes when `--csv` is not given: this file in the current directory. */
export const DEFAULT_CSV = 'notary-verify.csv';

export interface DirOptions {
  /** The CSV's path; `-` writes it to stdout (the summary then goes to stderr). Default `DEFAULT_CSV`. */
  csv?: string | undefined;
  /** Print the batch result as JSON (every item's report) instead of the summary. */
  json?: boolean;
}

/**
 * Verifies the folder `dir` (its regular files, not its subfolders nor hidden files) and writes the CSV.
 * @returns the command's output and exit status: the batch's (0 every item passed, 1 one failed, 2 one was
 *   unusable or nothing could be checked, 3 one was incomplete); 2 when the folder cannot be read, has more
 *   than `MAX_BATCH_ENTRIES` files, or the CSV cannot be written.
 */
export async function runDirBatch(
  dir: string,
  verifyOptions: BatchVerifyOptions,
  options: DirOptions = {},
): Promise<{ code: ExitCode; stdout: string; stderr: string }> {
  let entries: BatchEntry[];
  try {
    entries = await listFiles(dir);
  } catch (e) {
    return { code: EXIT_CODES.unusable, stdout: '', stderr: `notary-verify: ${errorMessage(e)}\n` };
  }
  const result = await verifyBatch(
    { entries, read: async (name) => new Uint8Array(await readFile(path.join(dir, name))) },
    verifyOptions,
  );
  const csv = batchCsv(result);
  const report = options.json ? `${JSON.stringify(result, null, 2)}\n` : formatBatchSummary(result);
  const target = options.csv ?? DEFAULT_CSV;
  if (target === '-') return { code: result.exitCode, stdout: csv, stderr: report };
  try {
    await writeFile(target, csv);
  } catch (e) {
    return {
      code: EXIT_CODES.unusable,
      stdout: report,
      stderr: `notary-verify: cannot write the CSV ${target}: ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}\n`,
    };
  }
  return { code: result.exitCode, stdout: report, stderr: options.json ? '' : `CSV: ${target}\n` };
}

/**
 * The regular files of `dir` (symbolic links to files included), hidden ones (`.name`) left out.
 * @throws Error when `dir` cannot be read, or holds more than `MAX_BATCH_ENTRIES` files.
 */
async function listFiles(dir: string): Promise<BatchEntry[]> {
  let handle: Awaited<ReturnType<typeof opendir>>;
  try {
    handle = await opendir(dir);
  } catch (e) {
    throw new Error(`cannot read the folder ${dir}: ${(e as NodeJS.ErrnoException).code ?? errorMessage(e)}`);
  }
  const entries: BatchEntry[] = [];
  // Iterating stops past the bound: a folder of a million files is refused without listing them all.
  for await (const dirent of handle) {
    if (dirent.name.startsWith('.') || dirent.isDirectory()) continue;
    if (!dirent.isFile() && !dirent.isSymbolicLink()) continue;
    const info = await stat(path.join(dir, dirent.name)).catch(() => null);
    if (!info?.isFile()) continue;
    entries.push({ name: dirent.name, size: info.size });
    if (entries.length > MAX_BATCH_ENTRIES) {
      throw new Error(`${dir} holds more than ${MAX_BATCH_ENTRIES} files: verify it in smaller folders`);
    }
  }
  return entries;
}
