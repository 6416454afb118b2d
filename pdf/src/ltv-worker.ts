/**
 * Worker thread entry of the long-term PDF work (`ltv-bounded.ts` runs it through `BoundedWorkerPool`): pdf-lib
 * parses the whole certificate PDF, which may hold an uploaded original, to append the /DSS or the document
 * timestamp field; a signing's file is parsed once (`preload`, or its first update) and kept for its later updates.
 * Heap and time are bounded by the pool, every stream pdf-lib decodes by `boundPdfLibDecoding`; the answer is
 * the updated PDF (moved, not copied, unless the worker keeps it for the signing's next update).
 */
import type { Transferable } from 'node:worker_threads';
import { boundPdfLibDecoding } from './bounded-decode';
import { serveBoundedJobs } from './bounded-worker';
import { PDF_MAX_STREAM_DECODED_BYTES, PDF_MAX_TOTAL_DECODED_BYTES } from './bounds';
import {
  addDocumentTimestampField,
  addSignatureField,
  appendValidationDataOn,
  appendValidationDataWithTimestampFieldOn,
  type IcpBrasilArtifacts,
  type LoadedPdf,
  loadForUpdates,
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
      signing?: string | undefined;
    }
  | { kind: 'preload'; pdf: Uint8Array; signing: string }
  | { kind: 'timestamp-field'; pdf: Uint8Array; capacity: number }
  | {
      kind: 'dss-timestamp-field';
      pdf: Uint8Array;
      material: ValidationMaterial;
      vri: SignatureValidationData[] | undefined;
      artifacts?: IcpBrasilArtifacts | undefined;
      signing?: string | undefined;
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

/**
 * The file of the signing under way (`preload`, then its updates), kept between its jobs: one parse for all.
 * Only one is kept, dropped after its last update (`dss`) or any failure; the heap bound still applies.
 */
let kept: { signing: string; loaded: LoadedPdf } | undefined;

/** The kept file of `signing` (its updates check its bytes against theirs), or `pdf` parsed. */
async function loadedFor(signing: string | undefined, pdf: Uint8Array): Promise<LoadedPdf> {
  if (signing !== undefined && kept?.signing === signing) return kept.loaded;
  return loadForUpdates(pdf);
}

async function serve(job: LtvJob): Promise<{ output: LtvReply; transfer?: Transferable[] }> {
  if (job.kind === 'preload') {
    kept = { signing: job.signing, loaded: await loadForUpdates(job.pdf) };
    return { output: new Uint8Array() };
  }
  if (job.kind === 'dss-timestamp-field') {
    const loaded = await loadedFor(job.signing, job.pdf);
    const { validated, prepared } = await appendValidationDataWithTimestampFieldOn(
      loaded,
      job.pdf,
      job.material,
      job.vri,
      job.artifacts,
    );
    const output = { prepared, validatedLength: validated.length };
    if (job.signing === undefined) return { output, transfer: movable(prepared) };
    // Kept for the signing's last update: copied back, not moved.
    kept = { signing: job.signing, loaded };
    return { output };
  }
  const pdf =
    job.kind === 'dss'
      ? await appendValidationDataOn(
          await loadedFor(job.signing, job.pdf),
          job.pdf,
          job.material,
          job.vri,
          job.artifacts,
        )
      : job.kind === 'signature-field'
        ? await addSignatureField(job.pdf, job.capacity, job.options)
        : await addDocumentTimestampField(job.pdf, job.capacity);
  if (job.kind === 'dss') kept = undefined;
  // An unchanged store answers the input itself: copy it so that moving it never detaches a caller's view.
  const own = pdf === job.pdf ? new Uint8Array(pdf) : pdf;
  return { output: own, transfer: movable(own) };
}

serveBoundedJobs<LtvJob, LtvReply>(async (job) => {
  budget.reset();
  try {
    return await serve(job);
  } catch (error) {
    kept = undefined;
    // pdf-lib reports a bound hit inside its parser as an invalid object: the bound is the real reason.
    const exceeded = budget.exceeded;
    throw exceeded ? new Error(`past a bound: ${exceeded.message}`) : error;
  }
});
