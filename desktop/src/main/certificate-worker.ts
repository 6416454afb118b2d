/**
 * Worker thread entry of the certificate check (run by `certificate-check.ts` through `BoundedWorkerPool`):
 * the only place in the desktop app where pdf-lib parses a certificate PDF the user picked, under the bounds
 * the service puts on every untrusted PDF (`@notary/pdf/bounds`): the pool bounds the heap and the CPU time,
 * `boundPdfLibDecoding` every stream pdf-lib decodes (one stream, and all of a job's together), and the receipt
 * stream itself is read to at most `MAX_RECEIPT_BYTES` (`@notary/verify/certificate`). The answer is the
 * attached receipt (a few KB) or why there is none; the network checks run in main on that receipt.
 */
import { boundPdfLibDecoding } from '@notary/pdf/bounded-decode';
import { serveBoundedJobs } from '@notary/pdf/bounded-worker';
import { PDF_MAX_STREAM_DECODED_BYTES, PDF_MAX_TOTAL_DECODED_BYTES } from '@notary/pdf/bounds';
import { type AttachedReceipt, CertificateError, extractReceipt } from '@notary/verify/certificate';

/** One job: the certificate's bytes (moved to the worker, and moved back with the answer). */
export interface ReceiptJob {
  certificate: Uint8Array;
}

/**
 * A job's answer: the receipt as attached, or why the certificate gives none (a sentence); and the
 * certificate's bytes, handed back without a copy (main still needs them for check 1).
 */
export type ReceiptJobOutcome = (
  | { kind: 'receipt'; receipt: AttachedReceipt }
  | { kind: 'none'; message: string }
) & { certificate: Uint8Array };

/** `bytes`' buffer, to be moved when the bytes own it (a view into a larger buffer would take it along). */
function movable(bytes: Uint8Array): ArrayBuffer[] {
  const owns = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return owns && bytes.buffer instanceof ArrayBuffer ? [bytes.buffer] : [];
}

const budget = boundPdfLibDecoding(PDF_MAX_STREAM_DECODED_BYTES, PDF_MAX_TOTAL_DECODED_BYTES);

serveBoundedJobs<ReceiptJob, ReceiptJobOutcome>(async ({ certificate }) => {
  budget.reset();
  let outcome: ReceiptJobOutcome;
  try {
    outcome = { kind: 'receipt', receipt: await extractReceipt(certificate), certificate };
  } catch (e) {
    if (!(e instanceof CertificateError)) throw e;
    outcome = { kind: 'none', message: e.message, certificate };
  }
  // pdf-lib reports a bound hit inside its parser as an invalid object (or reads on without it): the bound is
  // the real reason, and a PDF past one is not read further, as the service would not stamp it.
  const exceeded = budget.exceeded;
  if (exceeded) {
    outcome = {
      kind: 'none',
      message: `the certificate is not a readable PDF: ${exceeded.message}`,
      certificate,
    };
  }
  return { output: outcome, transfer: movable(certificate) };
});
