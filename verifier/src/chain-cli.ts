/**
 * `notary-verify chain <certidao.pdf> [--json]`: checks the run chain a certidão de permanência carries
 * (`monitor-chain.json`): exit 0 when every link holds, 1 when a run was removed, added or reordered, 2 when the
 * file is unusable (not a PDF, no chain attached).
 */
import { parseArgs } from 'node:util';
import type { CliResult } from './cli.ts';
import { readCliFile } from './cli-files.ts';
import { errorMessage } from './error-message.ts';
import { checkCertidaoChain, formatChainReport } from './monitor-chain.ts';

export const CHAIN_USAGE = `Usage: notary-verify chain <certidao.pdf> [--json]

Checks the run chain of a certidão de permanência (its attached monitor-chain.json): runs numbered 1, 2, ...
without gap, each run naming the WACZ SHA-256 of the run before it that made an archive.
Exit codes: 0 every link holds; 1 a break (a run removed, added or reordered); 2 unusable input.
`;

/** Runs the `chain` command on `argv` (after `chain`); never throws. */
export async function runChainCli(argv: string[]): Promise<CliResult> {
  let file: string | undefined;
  let json = false;
  try {
    const parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    });
    if (parsed.values.help) return { code: 0, stdout: CHAIN_USAGE, stderr: '' };
    if (parsed.positionals.length !== 1) throw new Error('give exactly one certidão');
    file = parsed.positionals[0];
    json = parsed.values.json === true;
  } catch (e) {
    return { code: 2, stdout: '', stderr: `${errorMessage(e)}\n\n${CHAIN_USAGE}` };
  }
  try {
    const report = await checkCertidaoChain(await readCliFile(file ?? ''));
    const stdout = json ? `${JSON.stringify(report, null, 2)}\n` : formatChainReport(report);
    if (!report.chain) return { code: 2, stdout, stderr: '' };
    return { code: report.breaks.length === 0 ? 0 : 1, stdout, stderr: '' };
  } catch (e) {
    return { code: 2, stdout: '', stderr: `notary-verify: ${errorMessage(e)}\n` };
  }
}
