import { PDFDocument } from 'pdf-lib';
import { attachFile, type PdfAttachment } from './attachment';
import { BoundedWorkerPool, WorkerBoundError } from './bounded-worker';
import {
  PDF_WORKER_DEADLINE_MS,
  PDF_WORKER_MAX_OLD_GENERATION_MB,
  PDF_WORKER_MAX_YOUNG_GENERATION_MB,
} from './bounds';
import { createCertificatePages, embedScreenshot } from './certificate-page';
import { embedFonts } from './fonts';
import { stringsFor } from './i18n';
import type { CertificateData, CertificateLanguage } from './model';
import { addSignaturePlaceholder, type SignaturePlaceholderOptions } from './placeholder';
import type { StampJob } from './stamp-worker';
import { boundReason, type StampOutcome } from './stamped';

export type { PdfAttachment } from './attachment';
export type { SignaturePlaceholderOptions } from './placeholder';

export interface RenderOptions {
  lang: CertificateLanguage;
  signaturePlaceholder?: SignaturePlaceholderOptions;
  /**
   * Files attached as associated files (`/EmbeddedFiles` and `/AF`, `attachment.ts`), written before the
   * signature placeholder so that a signature covers them (the receipt, issue 16).
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
}

/**
 * Stamping workers of this process (`stamp-worker.ts`), bounded by `bounds.ts`. Two stay warm (the HTTP
 * route renders two at a time), each for at most 100 jobs and while its heap stays under 96 MB after a job
 * (a warm worker holds about 40 MB: pdf-lib, fontkit and the parsed fonts); idle ones leave after a minute.
 */
const stampers = new BoundedWorkerPool<StampJob, StampOutcome>(
  new URL('./stamp-worker.ts', import.meta.url),
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
 * - With `signaturePlaceholder`, an invisible PAdES signature field (`/SubFilter /ETSI.CAdES.detached`,
 *   /ByteRange and zeroed /Contents placeholders) is added on the last certificate page, ready for
 *   `@signpdf/signpdf`'s `sign()`; an existing signature of a stamped original stays valid (its bytes are
 *   untouched).
 *
 * Throws only for internal errors (missing fonts, a bug), and `signal`'s reason once it aborts.
 */
export async function renderCertificate(
  data: CertificateData,
  source: Uint8Array | null,
  options: RenderOptions,
): Promise<RenderedCertificate> {
  if (source === null) return { pdf: await renderSeparate(data, options), layout: 'separate' };
  const { signal, ...stampOptions } = options;
  let outcome: StampOutcome;
  try {
    // The source is copied to the worker: the caller keeps its bytes.
    outcome = await stampers.run({ data, source, options: stampOptions }, signal ? { signal } : {});
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    const detail = error instanceof Error ? error.message : String(error);
    // Past a bound is the source's doing; anything else (the worker did not start, crashed) is ours.
    if (!(error instanceof WorkerBoundError)) console.error('[certificate] stamping worker failed', error);
    outcome = {
      kind: 'fallback',
      reason: error instanceof WorkerBoundError ? boundReason(detail) : `could not stamp the PDF: ${detail}`,
    };
  }
  if (outcome.kind === 'stamped') return { pdf: outcome.pdf, layout: 'stamped' };
  signal?.throwIfAborted();
  return { pdf: await renderSeparate(data, options), layout: 'separate', fallbackReason: outcome.reason };
}

async function renderSeparate(data: CertificateData, options: RenderOptions): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const s = stringsFor(options.lang);
  // The exact file name, whatever its script: document metadata is UTF-16 text (7.9.2.2).
  doc.setTitle(data.document.fileName, { showInWindowTitleBar: true });
  doc.setSubject(`${s.title} — ${s.certificateNo(data.document.serialNumber)}`);
  doc.setAuthor(data.serviceName);
  doc.setCreator(data.serviceName);
  doc.setProducer(data.serviceName);
  doc.setCreationDate(data.issuedAt);
  doc.setModificationDate(data.issuedAt);
  doc.setLanguage(options.lang === 'en' ? 'en' : 'pt-BR');
  const fonts = await embedFonts(doc);
  const screenshot = await embedScreenshot(doc, data);
  const pages = createCertificatePages(doc, fonts, data, {
    lang: options.lang,
    originalBytes: null,
    ...(screenshot ? { screenshot } : {}),
  });
  for (const page of pages) doc.addPage(page);
  for (const file of options.attachments ?? []) attachFile(doc, file);
  if (options.signaturePlaceholder) addSignaturePlaceholder(doc, pages, options.signaturePlaceholder);
  return doc.save({ useObjectStreams: false, addDefaultPage: false, updateFieldAppearances: false });
}
