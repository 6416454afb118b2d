import { readFile, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { errorMessage } from './error-message.ts';
import { formatMonitorReport, monitorLog, type SeenCheckpoint } from './monitor.ts';
import { EXIT_CODES, type ExitCode } from './report.ts';

/** The usage of `notary-verify monitor`. */
export const MONITOR_USAGE = `notary-verify monitor <log URL> [<log URL>...] --log-key VKEY [--state FILE] [--prefix SERIAL] [--json]

Follows a notary's transparency log from its checkpoint and tiles (C2SP tlog-tiles): checks the checkpoint's
signature against --log-key, that every entry and tile matches it, that the checkpoint kept in --state from the
previous run is a prefix of today's (nothing changed, removed or inserted; no rollback), and that every source
given shows one history (a fork is reported with both signed checkpoints). --prefix lists the entries whose
serial starts with it. Exit 0 consistent, 1 inconsistent or a fork, 2 unusable input.
`;

/** Runs `notary-verify monitor` with its arguments (after `monitor`). */
export async function runMonitorCli(
  argv: string[],
  options: { fetch?: typeof fetch } = {},
): Promise<{ code: ExitCode; stdout: string; stderr: string }> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (e) {
    return { code: EXIT_CODES.unusable, stdout: '', stderr: `${errorMessage(e)}\n\n${MONITOR_USAGE}` };
  }
  const { values, positionals } = parsed;
  if (positionals.length === 0 || !values['log-key']) {
    return {
      code: EXIT_CODES.unusable,
      stdout: '',
      stderr: `give a log URL and --log-key\n\n${MONITOR_USAGE}`,
    };
  }
  try {
    const previous = values.state
      ? await readFile(values.state, 'utf8').then(
          (text) => JSON.parse(text) as SeenCheckpoint,
          (e: NodeJS.ErrnoException) => {
            if (e.code === 'ENOENT') return undefined;
            throw e;
          },
        )
      : undefined;
    const report = await monitorLog({
      urls: positionals,
      logKey: values['log-key'],
      ...(previous ? { previous } : {}),
      ...(values.prefix ? { serialPrefix: values.prefix } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    // Only a consistent view replaces what was seen: the evidence of a fork stays in the state file.
    if (values.state && report.ok && report.latest) {
      await writeFile(values.state, `${JSON.stringify(report.latest, null, 2)}\n`);
    }
    const stdout = values.json ? `${JSON.stringify(report, null, 2)}\n` : formatMonitorReport(report);
    return { code: report.ok ? EXIT_CODES.passed : EXIT_CODES.failed, stdout, stderr: '' };
  } catch (e) {
    return { code: EXIT_CODES.unusable, stdout: '', stderr: `notary-verify monitor: ${errorMessage(e)}\n` };
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      'log-key': { type: 'string' },
      state: { type: 'string' },
      prefix: { type: 'string' },
      json: { type: 'boolean' },
    },
  });
}
