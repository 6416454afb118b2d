import { errorMessage } from '@notary/shared';
import {
  EncryptedPDFError,
  ParseSpeeds,
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFName,
  PDFNumber,
  type PDFPage,
  PDFRef,
} from 'pdf-lib';
import { attachFile, type PdfAttachment } from './attachment';
import { PdfBoundError } from './bounds';
import { createCertificatePages, placeScreenshot } from './certificate-page';
import { embedFonts } from './fonts';
import { IncrementalUpdate, inspectOriginal, UnsoundPdfError } from './incremental';
import type { CertificateData, CertificateLanguage } from './model';
import { collectPages, PageTreeError, stampPages } from './page-mark';
import { applyPdfACopy, type PdfAId, planPdfACopy, readPdfA } from './pdfa';
import { addSignaturePlaceholder, type SignaturePlaceholderOptions } from './placeholder';
import { installFastStreamScan } from './stream-scan';

/** What stamping needs besides the data and the source. */
export interface StampOptions {
  lang: CertificateLanguage;
  signaturePlaceholder?: SignaturePlaceholderOptions;
  /** Associated files, attached before the signature placeholder (see `RenderOptions.attachments`). */
  attachments?: PdfAttachment[];
}

/**
 * The source stamped (`pdf`: the source as exact prefix, then the incremental update), or why not. `pdfa` is what
 * the stamped file declares (null: not PDF/A, the original did not declare it), `originalPdfA` what the original
 * declared.
 */
export type StampOutcome =
  | { kind: 'stamped'; pdf: Uint8Array; pdfa: PdfAId | null; originalPdfA: PdfAId | null }
  | { kind: 'fallback'; reason: string };

/**
 * Stamps `source` (ISO 32000-1, 7.5.6 incremental update): every page marked, the certificate page(s)
 * appended, with `signaturePlaceholder` an invisible PAdES signature field on the last one. Any problem of
 * the source (encrypted, damaged cross-reference data, page tree loop, unparseable, a stream past
 * `PDF_MAX_STREAM_DECODED_BYTES`) is a `fallback` with a short English reason; never throws because of the
 * source. Parses untrusted bytes with pdf-lib: run it only in a bounded worker (`stamp-worker.ts`).
 */
export async function stampSource(
  data: CertificateData,
  source: Uint8Array,
  options: StampOptions,
): Promise<StampOutcome> {
  try {
    return { kind: 'stamped', ...(await renderStamped(data, source, options)) };
  } catch (error) {
    // Whatever went wrong with this source (pdf-lib may trip on odd structures in many ways), the
    // standalone certificate does not depend on it.
    return { kind: 'fallback', reason: fallbackReason(source, error) };
  }
}

/** The reason given for a source that exceeds a bound of `bounds.ts`. */
export function boundReason(detail: string): string {
  return `PDF exceeds a processing bound: ${detail}`;
}

/** A problem of the source file found while stamping (the message is the English reason). */
class SourcePdfError extends Error {}

/** A short English reason for falling back; encryption wins over the structural symptom it may cause. */
function fallbackReason(source: Uint8Array, error: unknown): string {
  const detail = errorMessage(error);
  if (error instanceof EncryptedPDFError || (error instanceof SourcePdfError && detail === 'encrypted')) {
    return 'encrypted PDF';
  }
  // A damaged file may still say it is encrypted (a trailer's /Encrypt entry, 7.6.1): the clearer reason.
  if (
    /\/Encrypt\s*(?:\d+\s+\d+\s+R|<<)/.test(
      Buffer.from(source.buffer, source.byteOffset, source.byteLength).toString('latin1'),
    )
  ) {
    return 'encrypted PDF';
  }
  if (error instanceof PdfBoundError) return boundReason(detail);
  if (error instanceof UnsoundPdfError) return `damaged cross-reference data: ${detail}`;
  if (error instanceof PageTreeError) return `invalid page tree: ${detail}`;
  if (error instanceof SourcePdfError) return `unparseable PDF: ${detail}`;
  return `could not stamp the PDF: ${detail}`;
}

/** Loads the source for stamping; every parse failure but a bound becomes a `SourcePdfError`. */
async function loadSource(source: Uint8Array): Promise<PDFDocument> {
  installFastStreamScan();
  try {
    return await PDFDocument.load(source, {
      updateMetadata: false,
      throwOnInvalidObject: true,
      parseSpeed: ParseSpeeds.Fastest,
    });
  } catch (error) {
    if (error instanceof EncryptedPDFError || error instanceof PdfBoundError) throw error;
    throw new SourcePdfError(errorMessage(error));
  }
}

async function renderStamped(
  data: CertificateData,
  source: Uint8Array,
  options: StampOptions,
): Promise<{ pdf: Uint8Array; pdfa: PdfAId | null; originalPdfA: PdfAId | null }> {
  const structure = inspectOriginal(source);
  if (structure.encrypted) throw new SourcePdfError('encrypted');
  const doc = await loadSource(source);
  const catalog = doc.context.lookup(structure.root);
  // pdf-lib finds the catalog on its own (and the signature placeholder uses its view): both must agree.
  if (!(catalog instanceof PDFDict) || catalog !== doc.catalog) {
    throw new SourcePdfError('the trailer /Root is not the catalog pdf-lib parsed');
  }
  const pages = collectPages(doc.context, catalog);
  const update = IncrementalUpdate.begin(doc, source, structure);
  // An original that declares PDF/A stays PDF/A (`planPdfACopy`): embedded fonts, colours its output intent allows.
  const declared = readPdfA(doc);
  const plan = planPdfACopy(declared, (options.attachments ?? []).length > 0);

  const fonts = await embedFonts(doc);
  stampPages(doc.context, pages, fonts, data, options.lang, plan?.colour);
  // In the stamping worker: the screenshot is decoded here, within its bounds.
  const screenshot = placeScreenshot(doc, data, 'decode');
  const certificate = createCertificatePages(doc, fonts, data, {
    lang: options.lang,
    originalBytes: source.length,
    pdfa: plan
      ? { produced: plan.produced, original: plan.original, changes: plan.changes }
      : { produced: null, original: null },
    ...(plan ? { colour: plan.colour } : {}),
    ...(screenshot ? { screenshot } : {}),
  });
  appendToPageTree(doc, catalog, certificate);
  for (const file of options.attachments ?? []) attachFile(doc, file);
  if (plan) applyPdfACopy(doc, declared, plan);
  if (options.signaturePlaceholder) addSignaturePlaceholder(doc, certificate, options.signaturePlaceholder);
  await doc.flush();
  const pdf = update.write();
  // Self-check: the new section and the whole chain must resolve (every offset points at its object).
  try {
    inspectOriginal(pdf);
  } catch (error) {
    throw new Error(`the incremental update failed its own check: ${errorMessage(error)}`);
  }
  return { pdf, pdfa: plan?.produced ?? null, originalPdfA: declared.declared };
}

/**
 * Appends `pages` as last kids of the root /Pages node and raises its /Count: the root is the only node
 * that changes, whatever the shape of the original tree.
 */
function appendToPageTree(doc: PDFDocument, catalog: PDFDict, pages: PDFPage[]): void {
  const rootRef = catalog.get(PDFName.of('Pages'));
  const root = doc.context.lookup(rootRef);
  if (!(rootRef instanceof PDFRef) || !(root instanceof PDFDict))
    throw new SourcePdfError('no page tree root');
  const kids = root.lookup(PDFName.of('Kids'));
  const count = root.lookup(PDFName.of('Count'));
  if (!(kids instanceof PDFArray) || !(count instanceof PDFNumber))
    throw new SourcePdfError('bad page tree root');
  // An indirect /Kids array is extended in place (that object is then part of the update).
  for (const page of pages) {
    kids.push(page.ref);
    page.node.set(PDFName.of('Parent'), rootRef);
  }
  root.set(PDFName.of('Count'), PDFNumber.of(count.asNumber() + pages.length));
}
