/**
 * Worker thread entry of the long-term PDF work (`ltv-bounded.ts` runs it through `BoundedWorkerPool`): pdf-lib
 * parses the whole certificate PDF, which may hold an uploaded original, to append the /DSS or the document
 * timestamp field. Heap and time are bounded by the pool, every stream pdf-lib decodes by
 * `boundPdfLibDecoding`; the answer is the updated PDF (moved, not copied).
 */
import type { Transferable } from 'node:worker_threads';
import { boundPdfLibDecoding } from './bounded-decode';
import { serveBoundedJobs } from './bounded-worker';
import { PDF_MAX_STREAM_DECODED_BYTES, PDF_MAX_TOTAL_DECODED_BYTES } from './bounds';
import {
  addDocumentTimestampField,
  addSignatureField,
  appendValidationData,
  appendValidationDataWithTimestampField,
  type IcpBrasilArtifacts,
  type SignatureFieldOptions,
  type SignatureValidationData,
  type ValidationMaterial,
} from './ltv';

/** One job as posted to the worker (structured clone). */
export type LtvJob =
  | {
      kind: 'dss';
      pdf: Uint8Array;
      material: ValidationMaterial;
      vri: SignatureValidationData[] | undefined;
      artifacts?: IcpBrasilArtifacts | undefined;
    }
  | { kind: 'timestamp-field'; pdf: Uint8Array; capacity: number }
  | {
      kind: 'dss-timestamp-field';
      pdf: Uint8Array;
      material: ValidationMaterial;
      vri: SignatureValidationData[] | undefined;
      artifacts?: IcpBrasilArtifacts | undefined;
    }
  | { kind: 'signature-field'; pdf: Uint8Array; capacity: number; options: SignatureFieldOptions };

const budget = boundPdfLibDecoding(PDF_MAX_STREAM_DECODED_BYTES, PDF_MAX_TOTAL_DECODED_BYTES);

/**
 * A job's answer: the updated PDF; for `dss-timestamp-field`, the PDF with the field and where the /DSS
 * update ends in it (the file with the /DSS alone is that prefix, so it is not sent twice).
 */
export type LtvReply = Uint8Array | { prepared: Uint8Array; validatedLength: number };

/** `pdf`'s buffer, to be moved when the bytes own it (a view into a shared pool would take the pool along). */
function movable(pdf: Uint8Array): Transferable[] {
  const owns = pdf.byteOffset === 0 && pdf.byteLength === pdf.buffer.byteLength;
  return owns && pdf.buffer instanceof ArrayBuffer ? [pdf.buffer] : [];
}

serveBoundedJobs<LtvJob, LtvReply>(async (job) => {
  budget.reset();
  try {
    if (job.kind === 'dss-timestamp-field') {
      const { validated, prepared } = await appendValidationDataWithTimestampField(
        job.pdf,
        job.material,
        job.vri,
        job.artifacts,
      );
      return { output: { prepared, validatedLength: validated.length }, transfer: movable(prepared) };
    }
    const pdf =
      job.kind === 'dss'
        ? await appendValidationData(job.pdf, job.material, job.vri, job.artifacts)
        : job.kind === 'signature-field'
          ? await addSignatureField(job.pdf, job.capacity, job.options)
          : await addDocumentTimestampField(job.pdf, job.capacity);
    // An unchanged store answers the input itself: copy it so that moving it never detaches a caller's view.
    const own = pdf === job.pdf ? new Uint8Array(pdf) : pdf;
    return { output: own, transfer: movable(own) };
  } catch (error) {
    // pdf-lib reports a bound hit inside its parser as an invalid object: the bound is the real reason.
    const exceeded = budget.exceeded;
    throw exceeded ? new Error(`past a bound: ${exceeded.message}`) : error;
  }
});
