/**
 * Worker thread entry of `BoundedOriginalSignatureReader`: the only place where the service parses an uploaded
 * PDF to list its signatures (`@notary/verify/original-signatures`), under the pool's heap and CPU bounds and
 * with every stream pdf-lib decodes bounded (`boundPdfLibDecoding`), as the stamping worker.
 */
import { boundPdfLibDecoding } from '@notary/pdf/bounded-decode';
import { serveBoundedJobs } from '@notary/pdf/bounded-worker';
import { PDF_MAX_STREAM_DECODED_BYTES, PDF_MAX_TOTAL_DECODED_BYTES } from '@notary/pdf/bounds';
import { describeOriginalSignatures } from '@notary/verify/original-signatures';
import type { ReceiptOriginalSignatures } from '@notary/verify/receipt';

/** One job: the PDF, the time to judge at, the trust anchors (DER). */
export interface OriginalSignaturesJob {
  pdf: Uint8Array;
  at: Date;
  anchors: Uint8Array[];
}

const budget = boundPdfLibDecoding(PDF_MAX_STREAM_DECODED_BYTES, PDF_MAX_TOTAL_DECODED_BYTES);

serveBoundedJobs<OriginalSignaturesJob, ReceiptOriginalSignatures>(async (job) => {
  budget.reset();
  const output = await describeOriginalSignatures(job.pdf, { at: job.at, anchors: job.anchors });
  // pdf-lib reports a bound hit inside its parser as an unreadable object: the bound is the real reason.
  const exceeded = budget.exceeded;
  if (exceeded && output.status === 'unreadable') {
    return { output: { status: 'unreadable', reason: `past a bound of the service: ${exceeded.message}` } };
  }
  return { output };
});
