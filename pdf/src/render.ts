import { errorMessage } from '@notary/shared';
import { SCREENSHOT_MAX_PIXELS } from '@notary/shared/limits';
import { moduleEntry } from '@notary/shared/module-entry';
import type { PdfAttachment } from './attachment';
import { BoundedWorkerPool, WorkerBoundError } from './bounded-worker';
import {
  PDF_WORKER_DEADLINE_MS,
  PDF_WORKER_MAX_OLD_GENERATION_MB,
  PDF_WORKER_MAX_YOUNG_GENERATION_MB,
} from './bounds';
import type { CertificateData, CertificateLanguage } from './model';
import { PDFA_SEPARATE, type PdfAId } from './pdfa';
import type { SignaturePlaceholderOptions } from './placeholder';
import { checkScreenshotHeader } from './png';
import { renderSeparate } from './separate';
import { boundReason, type StampOutcome } from './stamp-source';
import type { CertificateJob, CertificateJobOutcome } from './stamp-worker';

export type { PdfAttachment } from './attachment';
export type { PdfAId } from './pdfa';
export type { SignaturePlaceholderOptions } from './placeholder';

export interface RenderOptions {
  lang: CertificateLanguage;
  signaturePlaceholder?: SignaturePlaceholderOptions;
  /**
   * Files attached as associated files (`/EmbeddedFiles` and `/AF`, `attachment.ts`), written before the signature
   * placeholder so that a signature covers them (the receipt: a signed certificate then proves itself).
   */
  attachments?: PdfAttachment[];
  /** Aborts the render (the client left): a running stamping worker is terminated, the promise rejects. */
  signal?: AbortSignal;
}

export interface RenderedCertificate {
  pdf: Uint8Array;
  /** 'stamped': source PDF with every page marked + certificate page(s) appended as an incremental update; 'separate': a standalone certificate PDF. */
  layout: 'stamped' | 'separate';
  /** Set when the source was a PDF but could not be stamped (encrypted, broken, unparseable, past a bound): a short English reason. */
  fallbackReason?: string;
  /**
   * What the file declares of PDF/A (ISO 19005, its XMP `pdfaid`): `{part: 3, conformance: 'B'}` for every separate
   * certificate; for a stamped one what the copy of a PDF/A original declares (`planPdfACopy`), null when the
   * original is not PDF/A (the stamped file as a whole then is not).
   */
  pdfa: PdfAId | null;
  /** Stamped only: what the original declared (null: not PDF/A). Unknown (absent) for a separate certificate. */
  originalPdfA?: PdfAId | null;
}

/**
 * Certificate workers of this process (`stamp-worker.ts`), bounded by `bounds.ts`: they stamp source PDFs and
 * render the certificates that show a web capture's screenshot. Two stay warm (the HTTP route renders two at a
 * time), each for at most 100 jobs and while its heap stays under 96 MB after a job (a warm worker holds about
 * 40 MB: pdf-lib, fontkit and the parsed fonts); idle ones leave after a minute.
 */
const stampers = new BoundedWorkerPool<CertificateJob, CertificateJobOutcome>(
  moduleEntry(import.meta.url, 'stamp-worker'),
  {
    maxOldGenerationSizeMb: PDF_WORKER_MAX_OLD_GENERATION_MB,
    maxYoungGenerationSizeMb: PDF_WORKER_MAX_YOUNG_GENERATION_MB,
    deadlineMs: PDF_WORKER_DEADLINE_MS,
  },
  { maxIdle: 2, maxJobsPerWorker: 100, retireHeapBytes: 96 * 1024 * 1024, idleMs: 60_000 },
);

/**
 * Renders the notarization certificate of `data` (A4, Portuguese or English).
 *
 * - `source` is the original file when the document is a PDF, else null. A sound, unencrypted PDF is
 *   returned stamped: its bytes unchanged as a prefix, then an incremental update (ISO 32000-1, 7.5.6) that
 *   marks every page and appends the certificate page(s). The source is parsed and stamped only in a
 *   worker thread bounded by `bounds.ts` (heap, deadline, decoded stream sizes). Any other PDF (encrypted,
 *   damaged cross-reference data, page tree loop, unparseable, past a bound) gives a standalone certificate
 *   with `fallbackReason`; this function never throws because of the source.
 * - A web capture's screenshot (`data.screenshot`) is decoded only in that worker too: the calling thread
 *   reads its PNG header and nothing more. One declaring more than `SCREENSHOT_MAX_PIXELS` pixels is never
 *   decoded, one that cannot be read within its bounds (a decompression bomb, a damaged file, the worker's
 *   heap or deadline) is left out: either way the certificate is issued, with a sentence in the image's
 *   place saying that the screenshot is in the WACZ archive.
 * - With `signaturePlaceholder`, an invisible PAdES signature field (`/SubFilter /ETSI.CAdES.detached`,
 *   /ByteRange and zeroed /Contents placeholders) is added on the last certificate page, ready for
 *   `@signpdf/signpdf`'s `sign()`; an existing signature of a stamped original stays valid (its bytes are
 *   untouched).
 * - PDF/A (`pdfa.ts`, ISO 19005): a separate certificate is PDF/A-3b; a stamped original that declares PDF/A stays
 *   PDF/A (part 3 when files are attached to a PDF/A-1 or -2 original), one that does not is stamped as before and
 *   the certificate says it is not PDF/A. `pdfa` and `originalPdfA` of the result say which.
 *
 * Throws only for internal errors (missing fonts, a bug), and `signal`'s reason once it aborts.
 */
export async function renderCertificate(
  data: CertificateData,
  source: Uint8Array | null,
  options: RenderOptions,
): Promise<RenderedCertificate> {
  const { signal, ...jobOptions } = options;
  const run = (job: CertificateJob) => stampers.run(job, signal ? { signal } : {});
  let fallbackReason: string | undefined;
  if (source !== null) {
    let outcome: StampOutcome;
    try {
      // The source is copied to the worker: the caller keeps its bytes.
      const answer = await run({ kind: 'stamp', data, source, options: jobOptions });
      if (answer.kind === 'separate')
        throw new Error('the worker answered a stamping job with a separate PDF');
      outcome = answer;
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      const detail = errorMessage(error);
      // Past a bound is the source's doing; anything else (the worker did not start, crashed) is ours.
      if (!(error instanceof WorkerBoundError)) console.error('[certificate] stamping worker failed', error);
      outcome = {
        kind: 'fallback',
        reason:
          error instanceof WorkerBoundError ? boundReason(detail) : `could not stamp the PDF: ${detail}`,
      };
    }
    if (outcome.kind === 'stamped') {
      return { pdf: outcome.pdf, layout: 'stamped', pdfa: outcome.pdfa, originalPdfA: outcome.originalPdfA };
    }
    signal?.throwIfAborted();
    fallbackReason = outcome.reason;
  }
  const separate = (pdf: Uint8Array): RenderedCertificate => ({
    pdf,
    layout: 'separate',
    pdfa: PDFA_SEPARATE,
    ...(fallbackReason !== undefined ? { fallbackReason } : {}),
  });
  // A screenshot to show is decoded in the worker; one refused by its header is left out here, undecoded.
  if (data.screenshot && checkScreenshotHeader(data.screenshot, SCREENSHOT_MAX_PIXELS).kind === 'ok') {
    try {
      const answer = await run({ kind: 'separate', data, options: jobOptions });
      if (answer.kind === 'separate') return separate(answer.pdf);
      throw new Error(`the worker answered a separate certificate with '${answer.kind}'`);
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      // Past a bound is the screenshot's doing; anything else is ours. The certificate goes without the image.
      if (!(error instanceof WorkerBoundError))
        console.error('[certificate] certificate worker failed', error);
    }
  }
  signal?.throwIfAborted();
  return separate(await renderSeparate(data, jobOptions, 'header-only'));
}
