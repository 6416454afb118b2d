/**
 * `notary-verify <capture.wacz>`: a web capture's signed WACZ checked on its own (`wacz.ts`), with the trust
 * anchors the command line gives. Node only (it reads the files).
 */
import { readFile } from 'node:fs/promises';
import { pemCertificates } from './bytes.ts';
import { ICP_BRASIL_ROOTS_PEM } from './icp-brasil-roots.ts';
import { EXIT_CODES, type ExitCode } from './report.ts';
import { formatWaczReport, MAX_WACZ_BYTES, verifyWacz, WaczFormatError } from './wacz.ts';

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
    // The shipped ICP-Brasil roots anchor signers and ACTs (timestamp authorities) alike.
    const shipped =
      values.trust === 'icp-brasil' ? ICP_BRASIL_ROOTS_PEM.flatMap((pem) => pemCertificates(pem)) : [];
    const trustCa = [
      ...(values['trust-ca'] ? pemCertificates(await readText(values['trust-ca'])) : []),
      ...shipped,
    ];
    const tsaCa = [
      ...(values['tsa-ca'] ? pemCertificates(await readText(values['tsa-ca'])) : []),
      ...shipped,
    ];
    const bytes = await readBounded(file);
    const report = await verifyWacz(bytes, {
      ...(trustCa.length > 0 ? { trustCa } : {}),
      ...(tsaCa.length > 0 ? { tsaCa } : {}),
    });
    const stdout = values.json
      ? `${JSON.stringify(report, null, 2)}\n`
      : formatWaczReport(report, !values.quiet);
    return { code: report.exitCode, stdout, stderr: '' };
  } catch (e) {
    const message = e instanceof WaczFormatError ? `${file}: ${e.message}` : (e as Error).message;
    return { code: EXIT_CODES.unusable, stdout: '', stderr: `notary-verify: ${message}\n` };
  }
}

async function readBounded(path: string): Promise<Uint8Array> {
  const bytes = await readFile(path).catch((e: NodeJS.ErrnoException) => {
    throw new Error(`cannot read ${path}: ${e.code ?? e.message}`);
  });
  if (bytes.length > MAX_WACZ_BYTES) throw new WaczFormatError(`larger than ${MAX_WACZ_BYTES} bytes`);
  return new Uint8Array(bytes);
}

async function readText(path: string): Promise<string> {
  return new TextDecoder().decode(
    await readFile(path).catch((e: NodeJS.ErrnoException) => {
      throw new Error(`cannot read ${path}: ${e.code ?? e.message}`);
    }),
  );
}
