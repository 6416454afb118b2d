/**
 * The bounds of processing an untrusted PDF (anyone can upload one built to exhaust a reader). A source PDF is parsed
 * and stamped only inside a worker thread with these limits; one that exceeds any of them gets a separate certificate,
 * as a damaged PDF does. Plain constants (no configuration): they protect the process, they are not a policy.
 */

/** V8 old-generation heap of a stamping worker, MB (`resourceLimits.maxOldGenerationSizeMb`). */
export const PDF_WORKER_MAX_OLD_GENERATION_MB = 256;

/** V8 young-generation heap of a stamping worker, MB (`resourceLimits.maxYoungGenerationSizeMb`). */
export const PDF_WORKER_MAX_YOUNG_GENERATION_MB = 32;

/**
 * CPU time the worker thread may spend on one stamping job, ms (its start-up not included): past it the worker
 * is terminated. CPU time, not wall time, so a machine busy with other work cannot push an ordinary PDF past
 * it; a wall-clock backstop of six times this ends a job that waits without computing. The 352-page benchmark
 * source stamps in about 0.2 s.
 */
export const PDF_WORKER_DEADLINE_MS = 10_000;

/**
 * Largest decoded size of one PDF stream, bytes (Flate and every other filter): an object stream or a
 * cross-reference stream of an ordinary file decodes to a few MB at most.
 */
export const PDF_MAX_STREAM_DECODED_BYTES = 64 * 1024 * 1024;

/** Largest total of decoded stream buffers in one stamping job, bytes. */
export const PDF_MAX_TOTAL_DECODED_BYTES = 256 * 1024 * 1024;

/** A bound of this file was exceeded; `message` is a short English reason naming the bound. */
export class PdfBoundError extends Error {
  override readonly name = 'PdfBoundError';
}
