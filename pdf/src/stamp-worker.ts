/**
 * Worker thread entry of certificate work on untrusted input (run by `render.ts` through `BoundedWorkerPool`):
 * the only place where pdf-lib parses an uploaded PDF and where a web capture's screenshot is decoded. Its heap
 * and time are bounded by the pool, every stream pdf-lib decodes here by `boundPdfLibDecoding`, a screenshot by
 * its pixel cap and bounded inflation (`png.ts`); the answer is the certificate's bytes (moved, not copied) or
 * the reason for a separate certificate.
 */
import type { Transferable } from 'node:worker_threads';
import { boundPdfLibDecoding } from './bounded-decode';
import { serveBoundedJobs } from './bounded-worker';
import { PDF_MAX_STREAM_DECODED_BYTES, PDF_MAX_TOTAL_DECODED_BYTES } from './bounds';
import type { CertificateData } from './model';
import { renderSeparate } from './separate';
import { boundReason, type StampOptions, type StampOutcome, stampSource } from './stamp-source';

/**
 * One job as posted to the worker (structured clone: `Date`s and bytes survive): `stamp` the source PDF, or
 * render the `separate` certificate of a web capture (its screenshot decoded here).
 */
export type CertificateJob =
  | { kind: 'stamp'; data: CertificateData; source: Uint8Array; options: StampOptions }
  | { kind: 'separate'; data: CertificateData; options: StampOptions };

/** A job's answer: the stamping outcome, or the separate certificate's bytes. */
export type CertificateJobOutcome = StampOutcome | { kind: 'separate'; pdf: Uint8Array };

const budget = boundPdfLibDecoding(PDF_MAX_STREAM_DECODED_BYTES, PDF_MAX_TOTAL_DECODED_BYTES);

/** `pdf`'s buffer, to be moved when the bytes own it (a view into a shared pool would take the pool along). */
function movable(pdf: Uint8Array): Transferable[] {
  const owns = pdf.byteOffset === 0 && pdf.byteLength === pdf.buffer.byteLength;
  return owns && pdf.buffer instanceof ArrayBuffer ? [pdf.buffer] : [];
}

serveBoundedJobs<CertificateJob, CertificateJobOutcome>(async (job) => {
  budget.reset();
  if (job.kind === 'separate') {
    const pdf = await renderSeparate(job.data, job.options, 'decode');
    return { output: { kind: 'separate', pdf }, transfer: movable(pdf) };
  }
  const outcome = await stampSource(job.data, job.source, job.options);
  if (outcome.kind === 'stamped') return { output: outcome, transfer: movable(outcome.pdf) };
  // pdf-lib reports a bound hit inside its parser as an invalid object: the bound is the real reason.
  const exceeded = budget.exceeded;
  return { output: exceeded ? { kind: 'fallback', reason: boundReason(exceeded.message) } : outcome };
});
