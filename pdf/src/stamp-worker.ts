/**
 * Worker thread entry of certificate stamping (run by `render.ts` through `BoundedWorkerPool`): the only
 * place where pdf-lib parses an uploaded PDF. Its heap and time are bounded by the pool, every stream pdf-lib
 * decodes here by `boundPdfLibDecoding`; the answer is the stamped bytes (moved, not copied) or the reason
 * for a separate certificate.
 */
import { boundPdfLibDecoding } from './bounded-decode';
import { serveBoundedJobs } from './bounded-worker';
import { PDF_MAX_STREAM_DECODED_BYTES, PDF_MAX_TOTAL_DECODED_BYTES } from './bounds';
import type { CertificateData } from './model';
import { boundReason, type StampOptions, type StampOutcome, stampSource } from './stamped';

/** One stamping job as posted to the worker (structured clone: `Date`s and bytes survive). */
export interface StampJob {
  data: CertificateData;
  source: Uint8Array;
  options: StampOptions;
}

const budget = boundPdfLibDecoding(PDF_MAX_STREAM_DECODED_BYTES, PDF_MAX_TOTAL_DECODED_BYTES);

serveBoundedJobs<StampJob, StampOutcome>(async ({ data, source, options }) => {
  budget.reset();
  const outcome = await stampSource(data, source, options);
  if (outcome.kind === 'stamped') {
    const { pdf } = outcome;
    // Moved when the bytes own their buffer (a view into a shared pool would take the pool along).
    const owns = pdf.byteOffset === 0 && pdf.byteLength === pdf.buffer.byteLength;
    return { output: outcome, transfer: owns && pdf.buffer instanceof ArrayBuffer ? [pdf.buffer] : [] };
  }
  // pdf-lib reports a bound hit inside its parser as an invalid object: the bound is the real reason.
  const exceeded = budget.exceeded;
  return { output: exceeded ? { kind: 'fallback', reason: boundReason(exceeded.message) } : outcome };
});
