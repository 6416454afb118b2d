/**
 * `notary-verify`, the command line (Node only: it reads the files, then hands bytes to the checking core).
 *
 *   notary-verify <file> (--certificate cert.pdf | --receipt receipt.json) [--evm-rpc URL]...
 *     [--stacks-api URL]... [--tsa-ca ca.pem] [--trust-ca ca.pem] [--trust icp-brasil] [--at RFC3339]
 *     [--online] [--confirmations N] [--json]
 *   notary-verify --dir folder/ [--csv FILE] [the same options]   (batch.ts, batch-dir.ts)
 *   notary-verify chain <certidao.pdf> [--json]   (chain-cli.ts: a certidão de permanência's run chain)
 *   notary-verify extend <signed.pdf> --tsa URL [--out file] [--tsa-ca ca.pem]   (extend.ts; alias `augment`)
 *   notary-verify monitor <log URL>... --log-key VKEY [--state FILE] [--prefix SERIAL]   (monitor-cli.ts)
 *   notary-verify <capture.wacz> [--trust-ca ca.pem] [--tsa-ca ca.pem] [--trust icp-brasil] [--json] (wacz-cli.ts)
 *
 * Exit status (`EXIT_CODES` of report.ts): 0 when every applicable check passed, 1 when a check failed, 2 when
 * the input cannot be used (bad arguments, unreadable file, not a receipt, a certificate without receipt), 3
 * when none failed but some could not run (no endpoint given, none answered, a pending anchor) or ran in
 * part. `extend` uses the same four for what it writes (see extend.ts).
 */
import { parseArgs } from 'node:util';
import { runDirBatch } from './batch-dir.ts';
import { readCliFile, trustAnchorsOf } from './cli-files.ts';
import { errorMessage } from './error-message.ts';
import { formatReport } from './format.ts';
import { EXIT_CODES, type ExitCode } from './report.ts';
import { verify } from './verify.ts';

export const USAGE = `Usage: notary-verify <file> (--certificate cert.pdf | --receipt receipt.json) [options]
       notary-verify --dir FOLDER [--csv FILE] [options]

Checks a notarized file against its receipt (or the receipt attached to its certificate), in order:
  1 the file's SHA-256          4 the Stacks anchor (Stacks API call-read get-anchor, transaction)
  2 the Merkle proof            5 the RFC 3161 timestamp token, when present
  3 the EAS attestation (EVM)   6 the certificate's PAdES signatures (each signer's), when signed
It contacts only the endpoints given here; with several for a chain, each is asked and those that answer
must agree.

Options:
  --certificate FILE   the certificate PDF (its attached receipt.json is used)
  --receipt FILE       the receipt JSON (GET /api/documents/:id/receipt)
  --evm-rpc URL        an EVM JSON-RPC endpoint of the receipt's chain (repeatable)
  --stacks-api URL     a Stacks API endpoint (node /v2 + Hiro /extended routes) (repeatable)
  --stacks-api-key KEY a Hiro API key, sent as x-api-key to every --stacks-api endpoint
  --tsa-ca FILE        PEM certificates the RFC 3161 tokens must chain to
  --trust-ca FILE      PEM certificates the certificate's signers must chain to
  --log-key VKEY       the transparency log's verifier key (C2SP signed-note), obtained apart from the
                       receipt: the receipt's checkpoint must be signed by it (repeatable)
  --witness VKEY       a witness's verifier key (C2SP tlog-cosignature, Ed25519 cosignature/v1): the
                       receipt's checkpoint must carry its cosignature (repeatable)
  --witness-quorum N   how many of the --witness keys must have cosigned (default: all of them)
  --trust icp-brasil   also trust the ICP-Brasil roots shipped with the verifier (v2, v5, v12, the anchors
                       of DOC-ICP-15.03's PAdES policies) for the signer and the timestamps
  --at TIME            judge the certificate's signature at TIME (RFC 3339, e.g. 2031-05-01T12:00:00Z;
                       default now), with only the validation data the certificate carries
  --online             check 6 may fetch revocation data the certificate lacks from its certificates'
                       OCSP and CRL URLs (without it, check 6 makes no request), and the receipt's
                       transparency log is read at its URL: its current checkpoint must extend the
                       receipt's (consistency proof from its tiles), else a FORK is reported with both
                       signed checkpoints; public addresses only, each redirect checked: anyone can
                       write a URL into a certificate or a receipt
  --allow-private      with --online, also ask responders at private, loopback and link-local addresses
                       (a private CA's); cloud metadata addresses stay refused
  --confirmations N    blocks required on each chain, the inclusion block counting as 1 (default 1)
  --dir FOLDER         check every file of FOLDER beside its proof: <name>.certificate.pdf or
                       <name>.receipt.json, or a certificate alone (a stamped PDF holds its original;
                       another names its file); a summary, and a CSV row per file
  --csv FILE           where --dir writes its CSV (default notary-verify.csv here; - for stdout)
  --json               print the report as JSON
  --quiet              print only failed evidence
  -h, --help           this text

Each check is PASSED, FAILED (what was read contradicts the receipt, or endpoints that answered disagree),
PARTIAL (the rest passed; a part could not be checked, or an endpoint did not answer while others did), or
NOT RUN, with the reason: not applicable (no such anchor, no token, no or an unsigned certificate), no
endpoint given, endpoint unavailable (unreachable, rate-limited, gone, another chain, not the API), anchor
pending. A check that could not run is never PASSED, and an endpoint that cannot be read never FAILS one.

Exit status:
  0  verified: every applicable check passed
  1  a check failed
  2  unusable input (bad arguments, unreadable file, not a receipt, a certificate without receipt)
  3  incomplete: none failed, but some could not run or ran in part (give the missing endpoint or anchor,
     or try again)
--json prints the same report: "outcome" (passed, failed, incomplete), "exitCode", and per check "status"
and "reason".

notary-verify extend <signed.pdf> --tsa URL adds fresh validation data and a document timestamp (extend -h;
\`augment\`, ETSI EN 319 142-1's word for it, is the same command).

notary-verify chain <certidao.pdf> checks the run chain a certidão de permanência carries (monitor-chain.json):
each run names the WACZ SHA-256 of the one before it, so a run removed or reordered is a break (exit 1).

notary-verify <capture.wacz> [--trust-ca ca.pem] [--tsa-ca ca.pem] [--trust icp-brasil] checks a web
capture's archive on its own (WACZ Signing and Verification 0.1.0): the package hashes, the digest of
datapackage.json, the signature, the signer's certificate and the time signature (chained to the anchors
given), every WARC record against its index line, and prints the capture's facts. Same exit statuses.
`;

export interface CliResult {
  /** The exit status (see `EXIT_CODES`; `extend`'s mean the same for the file it writes). */
  code: ExitCode;
  stdout: string;
  stderr: string;
}

/** Runs the command on `argv` (without the node and script paths); never throws. */
export async function runCli(argv: string[], options: { fetch?: typeof fetch } = {}): Promise<CliResult> {
  // Loaded only for `extend` (`augment`, ETSI's word): it brings the PDF writer, which plain Node cannot load
  // (see bin/notary-verify.js).
  if (argv[0] === 'monitor') return (await import('./monitor-cli.ts')).runMonitorCli(argv.slice(1), options);
  if (argv[0] === 'extend' || argv[0] === 'augment')
    return (await import('./extend.ts')).runExtendCli(argv.slice(1), options);
  // The run chain of a certidão de permanência (chain-cli.ts).
  if (argv[0] === 'chain') return (await import('./chain-cli.ts')).runChainCli(argv.slice(1));
  let values: ReturnType<typeof parse>['values'];
  let positionals: string[];
  try {
    ({ values, positionals } = parse(argv));
  } catch (e) {
    return { code: EXIT_CODES.unusable, stdout: '', stderr: `${errorMessage(e)}\n\n${USAGE}` };
  }
  if (values.help) return { code: 0, stdout: USAGE, stderr: '' };
  const usage = (message: string): CliResult => ({
    code: EXIT_CODES.unusable,
    stdout: '',
    stderr: `${message}\n\n${USAGE}`,
  });
  const [file, ...extra] = positionals;
  const dir = values.dir;
  if (dir !== undefined) {
    if (file || values.certificate || values.receipt)
      return usage('--dir: give no file, --certificate or --receipt');
  } else if (values.csv !== undefined) {
    return usage('--csv goes with --dir');
  } else if (!file || extra.length > 0) {
    return usage('give exactly one file to verify');
  } else if (!values.certificate && !values.receipt && /\.wacz$/i.test(file)) {
    // A web capture's archive given alone is checked as a signed WACZ.
    return (await import('./wacz-cli.ts')).runWaczCli(file, values);
  } else if (!values.certificate === !values.receipt) {
    return usage('give either --certificate or --receipt');
  }
  const confirmations = values.confirmations === undefined ? 1 : Number(values.confirmations);
  if (!Number.isInteger(confirmations) || confirmations < 1)
    return usage('--confirmations: a whole number >= 1');
  const at = values.at === undefined ? undefined : parseRfc3339(values.at);
  if (at === null) return usage('--at: an RFC 3339 date-time, e.g. 2031-05-01T12:00:00Z');
  const witnessQuorum = values['witness-quorum'] === undefined ? undefined : Number(values['witness-quorum']);
  if (
    witnessQuorum !== undefined &&
    !(Number.isInteger(witnessQuorum) && witnessQuorum >= 1 && witnessQuorum <= (values.witness?.length ?? 0))
  )
    return usage('--witness-quorum: a whole number from 1 to the number of --witness keys');
  if (values.trust !== undefined && values.trust !== 'icp-brasil') return usage('--trust: only icp-brasil');
  if (values['allow-private'] && !values.online) return usage('--allow-private goes with --online');
  try {
    const { trustCa, tsaCa } = await trustAnchorsOf(values);
    const common = {
      evmRpcUrls: values['evm-rpc'] ?? [],
      stacksApiUrls: values['stacks-api'] ?? [],
      ...(values['stacks-api-key'] ? { stacksApiKey: values['stacks-api-key'] } : {}),
      ...(tsaCa.length > 0 ? { tsaCa } : {}),
      ...(trustCa.length > 0 ? { trustCa } : {}),
      confirmations,
      ...(at ? { at } : {}),
      online: values.online === true,
      ...(values['log-key'] ? { logKeys: values['log-key'] } : {}),
      ...(values.witness ? { witnessKeys: values.witness } : {}),
      ...(witnessQuorum === undefined ? {} : { witnessQuorum }),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      ...(await revocationFetchOf(values, options)),
    };
    if (dir !== undefined)
      return await runDirBatch(dir, common, { csv: values.csv, json: values.json === true });
    const report = await verify({
      ...common,
      file: await readCliFile(file ?? ''),
      ...(values.receipt ? { receipt: new TextDecoder().decode(await readCliFile(values.receipt)) } : {}),
      ...(values.certificate ? { certificate: await readCliFile(values.certificate) } : {}),
    });
    const stdout = values.json ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report, !values.quiet);
    return { code: report.exitCode, stdout, stderr: '' };
  } catch (e) {
    return { code: EXIT_CODES.unusable, stdout: '', stderr: `notary-verify: ${errorMessage(e)}\n` };
  }
}

/**
 * The fetch of the OCSP and CRL URLs a certificate names (`--online`): the address policy's `policedFetch`
 * (public addresses only, redirects checked hop by hop; `--allow-private` opens private ones, never cloud
 * metadata), loaded only when asked for. A caller's own `fetch` (tests, the page) is kept as given.
 */
async function revocationFetchOf(
  values: { online?: boolean; 'allow-private'?: boolean },
  options: { fetch?: typeof fetch },
): Promise<{ revocationFetch?: typeof fetch }> {
  if (values.online !== true || options.fetch) return {};
  const { policedFetch } = await import('@notary/platform/net/policed-fetch');
  return { revocationFetch: policedFetch({ allowPrivate: values['allow-private'] === true }) };
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      certificate: { type: 'string' },
      receipt: { type: 'string' },
      'evm-rpc': { type: 'string', multiple: true },
      'stacks-api': { type: 'string', multiple: true },
      'stacks-api-key': { type: 'string' },
      'tsa-ca': { type: 'string' },
      'trust-ca': { type: 'string' },
      'log-key': { type: 'string', multiple: true },
      witness: { type: 'string', multiple: true },
      'witness-quorum': { type: 'string' },
      trust: { type: 'string' },
      confirmations: { type: 'string' },
      at: { type: 'string' },
      online: { type: 'boolean' },
      'allow-private': { type: 'boolean' },
      json: { type: 'boolean' },
      quiet: { type: 'boolean' },
      dir: { type: 'string' },
      csv: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

/**
 * RFC 3339 section 5.6 `date-time` (`2031-05-01T12:00:00Z`, `...T12:00:00.5+02:00`; `t`/`z`/space accepted as
 * the section's note allows), as a Date; null when it is not one or names no real instant.
 */
export function parseRfc3339(text: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  // Date rolls 2031-02-30 over to March: the fields must read back (a leap second :60 is refused).
  const probe = new Date(Date.UTC(y, mo - 1, d));
  if (probe.getUTCFullYear() !== y || probe.getUTCMonth() !== mo - 1 || probe.getUTCDate() !== d) return null;
  if (h > 23 || mi > 59 || s > 59) return null;
  const date = new Date(text.replace(' ', 'T').toUpperCase());
  return Number.isNaN(date.getTime()) ? null : date;
}
