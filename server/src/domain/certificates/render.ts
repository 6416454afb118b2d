import { pdflibAddPlaceholder } from '@signpdf/placeholder-pdf-lib';
import { SUBFILTER_ETSI_CADES_DETACHED } from '@signpdf/utils';
import {
  EncryptedPDFError,
  ParseSpeeds,
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFNumber,
  type PDFPage,
  PDFRef,
  PDFString,
} from 'pdf-lib';
import { createCertificatePages } from './certificate-page';
import { embedFonts } from './fonts';
import { stringsFor } from './i18n';
import { IncrementalUpdate, inspectOriginal, UnsoundPdfError } from './incremental';
import type { CertificateData, CertificateLanguage } from './model';
import { collectPages, PageTreeError, stampPages } from './stamp';

/** PAdES signature placeholder wanted in the output (ISO 32000-1, 12.8; ETSI EN 319 142-1). */
export interface SignaturePlaceholderOptions {
  /** Bytes reserved for the CMS signature (the /Contents hex string holds this many placeholder bytes). */
  signatureLength: number;
  reason: string;
  location: string;
  name: string;
  contactInfo: string;
}

export interface RenderOptions {
  lang: CertificateLanguage;
  signaturePlaceholder?: SignaturePlaceholderOptions;
}

export interface RenderedCertificate {
  pdf: Uint8Array;
  /** 'stamped': source PDF with every page marked + certificate page(s) appended as an incremental update; 'separate': a standalone certificate PDF. */
  layout: 'stamped' | 'separate';
  /** Set when the source was a PDF but could not be stamped (encrypted, broken, unparseable): a short English reason. */
  fallbackReason?: string;
}

/**
 * Renders the notarization certificate of `data` (A4, Portuguese or English).
 *
 * - `source` is the original file when the document is a PDF, else null. A sound, unencrypted PDF is
 *   returned stamped: its bytes unchanged as a prefix, then an incremental update (ISO 32000-1, 7.5.6) that
 *   marks every page and appends the certificate page(s). Any other PDF (encrypted, damaged cross-reference
 *   data, page tree loop, unparseable) gives a standalone certificate with `fallbackReason`; this function
 *   never throws because of the source.
 * - With `signaturePlaceholder`, an invisible PAdES signature field (`/SubFilter /ETSI.CAdES.detached`,
 *   /ByteRange and zeroed /Contents placeholders) is added on the last certificate page, ready for
 *   `@signpdf/signpdf`'s `sign()`; an existing signature of a stamped original stays valid (its bytes are
 *   untouched).
 *
 * Throws only for internal errors (missing fonts, a bug).
 */
export async function renderCertificate(
  data: CertificateData,
  source: Uint8Array | null,
  options: RenderOptions,
): Promise<RenderedCertificate> {
  if (source === null) return { pdf: await renderSeparate(data, options), layout: 'separate' };
  let reason: string;
  try {
    return { pdf: await renderStamped(data, source, options), layout: 'stamped' };
  } catch (error) {
    // Whatever went wrong with this source (pdf-lib may trip on odd structures in many ways), the
    // standalone certificate does not depend on it.
    reason = fallbackReason(source, error);
  }
  return { pdf: await renderSeparate(data, options), layout: 'separate', fallbackReason: reason };
}

/** A problem of the source file found while stamping (the message is the English reason). */
class SourcePdfError extends Error {}

/** A short English reason for falling back; encryption wins over the structural symptom it may cause. */
function fallbackReason(source: Uint8Array, error: unknown): string {
  const detail = error instanceof Error ? error.message : String(error);
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
  if (error instanceof UnsoundPdfError) return `damaged cross-reference data: ${detail}`;
  if (error instanceof PageTreeError) return `invalid page tree: ${detail}`;
  if (error instanceof SourcePdfError) return `unparseable PDF: ${detail}`;
  return `could not stamp the PDF: ${detail}`;
}

/** Loads the source for stamping; every parse failure becomes a `SourcePdfError`. */
async function loadSource(source: Uint8Array): Promise<PDFDocument> {
  try {
    return await PDFDocument.load(source, {
      updateMetadata: false,
      throwOnInvalidObject: true,
      parseSpeed: ParseSpeeds.Fastest,
    });
  } catch (error) {
    if (error instanceof EncryptedPDFError) throw error;
    throw new SourcePdfError(error instanceof Error ? error.message : String(error));
  }
}

async function renderStamped(
  data: CertificateData,
  source: Uint8Array,
  options: RenderOptions,
): Promise<Uint8Array> {
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

  const fonts = await embedFonts(doc);
  stampPages(doc.context, pages, fonts, data, options.lang);
  const certificate = createCertificatePages(doc, fonts, data, {
    lang: options.lang,
    originalBytes: source.length,
  });
  appendToPageTree(doc, catalog, certificate);
  if (options.signaturePlaceholder) addSignaturePlaceholder(doc, certificate, options.signaturePlaceholder);
  await doc.flush();
  const pdf = update.write();
  // Self-check: the new section and the whole chain must resolve (every offset points at its object).
  try {
    inspectOriginal(pdf);
  } catch (error) {
    throw new Error(`the incremental update failed its own check: ${(error as Error).message}`);
  }
  return pdf;
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
  const pages = createCertificatePages(doc, fonts, data, { lang: options.lang, originalBytes: null });
  for (const page of pages) doc.addPage(page);
  if (options.signaturePlaceholder) addSignaturePlaceholder(doc, pages, options.signaturePlaceholder);
  return doc.save({ useObjectStreams: false, addDefaultPage: false, updateFieldAppearances: false });
}

/**
 * Adds the PAdES placeholder with `pdflibAddPlaceholder` on the last certificate page (invisible widget,
 * Rect [0 0 0 0]). An existing AcroForm is prepared first: indirect /Fields and /SigFlags are resolved so
 * the library extends them instead of replacing them, and the new field gets a name no existing field has.
 */
function addSignaturePlaceholder(
  doc: PDFDocument,
  pages: PDFPage[],
  options: SignaturePlaceholderOptions,
): void {
  const page = pages.at(-1);
  if (!page) throw new Error('no certificate page');
  const acroForm = doc.catalog.lookup(PDFName.of('AcroForm'));
  const existingNames = new Set<string>();
  if (acroForm instanceof PDFDict) {
    const fields = acroForm.lookup(PDFName.of('Fields'));
    if (fields instanceof PDFArray) {
      acroForm.set(PDFName.of('Fields'), fields);
      for (const field of fields.asArray()) {
        const name = doc.context.lookup(field);
        const title = name instanceof PDFDict ? name.lookup(PDFName.of('T')) : undefined;
        if (title instanceof PDFString || title instanceof PDFHexString)
          existingNames.add(title.decodeText());
      }
    }
    const flags = acroForm.lookup(PDFName.of('SigFlags'));
    if (flags instanceof PDFNumber) acroForm.set(PDFName.of('SigFlags'), flags);
    else acroForm.delete(PDFName.of('SigFlags'));
  }
  pdflibAddPlaceholder({
    pdfDoc: doc,
    pdfPage: page,
    reason: options.reason,
    location: options.location,
    name: options.name,
    contactInfo: options.contactInfo,
    signatureLength: options.signatureLength,
    subFilter: SUBFILTER_ETSI_CADES_DETACHED,
    widgetRect: [0, 0, 0, 0],
  });
  const annots = page.node.lookup(PDFName.of('Annots'));
  const widget = annots instanceof PDFArray ? doc.context.lookup(annots.get(annots.size() - 1)) : undefined;
  if (widget instanceof PDFDict) {
    let name = 'Certification';
    for (let i = 2; existingNames.has(name); i += 1) name = `Certification${i}`;
    widget.set(PDFName.of('T'), PDFString.of(name));
  }
}
