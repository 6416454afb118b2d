/**
 * `notary-verify <capture.wacz>`: a web capture's signed WACZ checked on its own (`wacz/`), with the trust
 * anchors the command line gives. Node only (it reads the files).
 */
import { readCliFile, trustAnchorsOf } from './cli-files.ts';
import { errorMessage } from './error-message.ts';
import { EXIT_CODES, type ExitCode } from './report.ts';
import { formatWaczReport, MAX_WACZ_BYTES, verifyWacz, WaczFormatError } from './wacz/index.ts';

/** The options of the command line a WACZ is verified with. */
export interface WaczCliOptions {
  'trust-ca'?: string;
  'tsa-ca'?: string;
  trust?: string;
  json?: boolean;
  quiet?: boolean;
}

/**
 * Verifies the WACZ at `file`: exit 0 verified, 1 a check failed, 2 not a WACZ or unreadable, 3 incomplete (a
 * chain not checked for want of `--trust-ca`/`--tsa-ca`). Never throws.
 */
export async function runWaczCli(
  file: string,
  values: WaczCliOptions,
): Promise<{ code: ExitCode; stdout: string; stderr: string }> {
  try {
    const { trustCa, tsaCa } = await trustAnchorsOf(values);
    const bytes = await readCliFile(file);
    if (bytes.length > MAX_WACZ_BYTES) throw new WaczFormatError(`larger than ${MAX_WACZ_BYTES} bytes`);
    const report = await verifyWacz(bytes, {
      ...(trustCa.length > 0 ? { trustCa } : {}),
      ...(tsaCa.length > 0 ? { tsaCa } : {}),
    });
    const stdout = values.json
      ? `${JSON.stringify(report, null, 2)}\n`
      : formatWaczReport(report, !values.quiet);
    return { code: report.exitCode, stdout, stderr: '' };
  } catch (e) {
    const message = e instanceof WaczFormatError ? `${file}: ${e.message}` : errorMessage(e);
    return { code: EXIT_CODES.unusable, stdout: '', stderr: `notary-verify: ${message}\n` };
  }
}
