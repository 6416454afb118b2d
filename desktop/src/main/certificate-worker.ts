/**
 * Worker thread entry of the certificate check (run by `certificate-check.ts` through `BoundedWorkerPool`):
 * the only place in the desktop app where pdf-lib parses a certificate PDF the user picked, under the bounds
 * the service puts on every untrusted PDF (`@notary/pdf/bounds`): the pool bounds the heap and the CPU time,
 * `boundPdfLibDecoding` every stream pdf-lib decodes (one stream, and all of a job's together), and the receipt
 * stream itself is read to at most `MAX_RECEIPT_BYTES` (`@notary/verify/certificate`). The answer is the
 * attached receipt (a few KB) or why there is none, and the results of the offline checks (5, the RFC 3161
 * token; 6, the certificate's PAdES signature), which parse the certificate's CMS and validation data and so
 * run here too, with no network; the network checks (1 to 4) run in main on that receipt. A certidão de
 * permanência's run chain (`monitor-chain.json`) is read and checked here too, under the same bounds.
 */
import { boundPdfLibDecoding } from '@notary/pdf/bounded-decode';
import { serveBoundedJobs } from '@notary/pdf/bounded-worker';
import { PDF_MAX_STREAM_DECODED_BYTES, PDF_MAX_TOTAL_DECODED_BYTES } from '@notary/pdf/bounds';
import { errorMessage } from '@notary/shared';
import type { CheckResult } from '@notary/verify';
import { type AttachedReceipt, CertificateError, extractReceipt } from '@notary/verify/certificate';
import { type ChainReport, checkCertidaoChain } from '@notary/verify/monitor-chain';
import { checkAgainstCertificate, OFFLINE_CHECKS } from '../common/certificate-check';

/**
 * One job: the certificate's bytes (moved to the worker, and moved back with the answer), and, to run the
 * offline checks too, the checked file (moved likewise: check 6 tells the original's own signatures from the
 * certificate's by it), the trust anchors (DER; null: the chains are reported not checked) and the time
 * the certificates are judged at (ISO 8601; null: now).
 */
export interface ReceiptJob {
  certificate: Uint8Array;
  offline?: { file: Uint8Array; anchors: Uint8Array[] | null; at: string | null };
  /** Read `certificate` as a certidão de permanência instead: its run chain, checked (`notary-verify chain`). */
  chain?: boolean;
}

/**
 * A job's answer: the receipt as attached (with the offline checks' results when asked: `checks`, or why they
 * could not run: `error`), or why the certificate gives none (a sentence); and the certificate's bytes (and
 * the file's, when sent), handed back without a copy (main still needs them for check 1).
 */
export type ReceiptJobOutcome = (
  | {
      kind: 'receipt';
      receipt: AttachedReceipt;
      offline?: { checks: CheckResult[] } | { error: string };
    }
  | { kind: 'none'; message: string }
  | { kind: 'chain'; report: ChainReport }
) & { certificate: Uint8Array; file?: Uint8Array };

/** The offline checks make no request: any attempt is refused. */
const noNetwork: typeof fetch = () => Promise.reject(new TypeError('the offline checks make no request'));

/** Checks 5 and 6 on `certificate`, its receipt and the checked file. */
async function offlineChecks(
  certificate: Uint8Array,
  receipt: AttachedReceipt,
  { file, anchors, at }: NonNullable<ReceiptJob['offline']>,
): Promise<{ checks: CheckResult[] } | { error: string }> {
  let result: Awaited<ReturnType<typeof checkAgainstCertificate>>;
  try {
    result = await checkAgainstCertificate(
      file,
      certificate,
      { evmRpcUrls: [], stacksApiUrls: [] },
      {
        fetch: noNetwork,
        attachedReceipt: receipt,
        anchors,
        at: at === null ? null : new Date(at),
        checks: OFFLINE_CHECKS,
      },
    );
  } catch (e) {
    // A signature the checking core cannot handle fails its checks; the receipt's own checks still run.
    return { error: errorMessage(e) };
  }
  if (result.kind !== 'report') return { error: 'message' in result ? result.message : result.kind };
  return { checks: result.report.checks.filter((c) => OFFLINE_CHECKS.includes(c.id)) };
}

/** `bytes`' buffer, to be moved when the bytes own it (a view into a larger buffer would take it along). */
function movable(bytes: Uint8Array): ArrayBuffer[] {
  const owns = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return owns && bytes.buffer instanceof ArrayBuffer ? [bytes.buffer] : [];
}

const budget = boundPdfLibDecoding(PDF_MAX_STREAM_DECODED_BYTES, PDF_MAX_TOTAL_DECODED_BYTES);

serveBoundedJobs<ReceiptJob, ReceiptJobOutcome>(async ({ certificate, offline, chain }) => {
  budget.reset();
  if (chain) {
    const report = await checkCertidaoChain(certificate);
    const exceeded = budget.exceeded;
    return {
      output: {
        kind: 'chain',
        report: exceeded
          ? { chain: undefined, breaks: [], unreadable: `not a readable PDF: ${exceeded.message}` }
          : report,
        certificate,
      },
      transfer: movable(certificate),
    };
  }
  const file = offline ? { file: offline.file } : {};
  let outcome: ReceiptJobOutcome;
  try {
    const receipt = await extractReceipt(certificate);
    outcome = {
      kind: 'receipt',
      receipt,
      certificate,
      ...file,
      ...(offline ? { offline: await offlineChecks(certificate, receipt, offline) } : {}),
    };
  } catch (e) {
    if (!(e instanceof CertificateError)) throw e;
    outcome = { kind: 'none', message: e.message, certificate, ...file };
  }
  // pdf-lib reports a bound hit inside its parser as an invalid object (or reads on without it): the bound is
  // the real reason, and a PDF past one is not read further, as the service would not stamp it.
  const exceeded = budget.exceeded;
  if (exceeded) {
    outcome = {
      kind: 'none',
      message: `the certificate is not a readable PDF: ${exceeded.message}`,
      certificate,
      ...file,
    };
  }
  return {
    output: outcome,
    transfer: [...movable(certificate), ...(offline ? movable(offline.file) : [])],
  };
});
