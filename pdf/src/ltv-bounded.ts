/**
 * The long-term PDF work (`ltv.ts`: /DSS updates, the document timestamp field, a further signer's field) in bounded worker threads
 * (`ltv-worker.ts`), for certificate PDFs that hold an uploaded original: parsing them is kept off the calling
 * thread, within the same bounds as stamping (`bounds.ts`: heap, CPU deadline, decoded stream sizes).
 */
import { moduleEntry } from '@notary/shared/module-entry';
import { BoundedWorkerPool } from './bounded-worker';
import {
  PDF_WORKER_DEADLINE_MS,
  PDF_WORKER_MAX_OLD_GENERATION_MB,
  PDF_WORKER_MAX_YOUNG_GENERATION_MB,
} from './bounds';
import type { LtvWriter } from './ltv';
import type { LtvJob, LtvReply } from './ltv-worker';

/**
 * One warm worker (signing at B-LT or B-LTA runs up to three jobs per certificate, one after the other, the
 * first parsing the file for the others: `preload`), for at
 * most 100 jobs and while its heap stays under 96 MB after a job; it leaves after a minute idle.
 */
const pool = new BoundedWorkerPool<LtvJob, LtvReply>(
  moduleEntry(import.meta.url, 'ltv-worker'),
  {
    maxOldGenerationSizeMb: PDF_WORKER_MAX_OLD_GENERATION_MB,
    maxYoungGenerationSizeMb: PDF_WORKER_MAX_YOUNG_GENERATION_MB,
    deadlineMs: PDF_WORKER_DEADLINE_MS,
  },
  { maxIdle: 1, maxJobsPerWorker: 100, retireHeapBytes: 96 * 1024 * 1024, idleMs: 60_000 },
);

/**
 * `LtvWriter` whose every call runs in a bounded worker (the PDF is copied there and the result moved back).
 * @throws `WorkerBoundError` past the heap or the deadline; Error with the worker's message otherwise (e.g.
 *   `past a bound: ...` when a stream decodes beyond `PDF_MAX_STREAM_DECODED_BYTES`, or the `ltv.ts` errors).
 */
export const boundedLtvWriter: LtvWriter = {
  appendValidationData: (pdf, material, vri, artifacts, signing) =>
    pdfOf(pool.run({ kind: 'dss', pdf, material, vri, artifacts, signing })),
  addDocumentTimestampField: (pdf, capacity) => pdfOf(pool.run({ kind: 'timestamp-field', pdf, capacity })),
  addSignatureField: (pdf, capacity, options) =>
    pdfOf(pool.run({ kind: 'signature-field', pdf, capacity, options })),
  appendValidationDataWithTimestampField: async (pdf, material, vri, artifacts, signing) => {
    const reply = await pool.run({ kind: 'dss-timestamp-field', pdf, material, vri, artifacts, signing });
    if (reply instanceof Uint8Array) throw new Error('LTV worker: a single PDF for a two-update job');
    const { prepared, validatedLength } = reply;
    return { validated: prepared.subarray(0, validatedLength), prepared };
  },
  // The worker parses the file while this thread signs it: the updates that follow reuse that parse.
  preload: (pdf, signing) =>
    pool.run({ kind: 'preload', pdf, signing }).then(
      () => undefined,
      () => undefined,
    ),
};

/** The PDF of a one-update job's reply. */
async function pdfOf(reply: Promise<LtvReply>): Promise<Uint8Array> {
  const answer = await reply;
  if (!(answer instanceof Uint8Array)) throw new Error('LTV worker: two updates for a one-update job');
  return answer;
}
