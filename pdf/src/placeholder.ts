import { pdflibAddPlaceholder } from '@signpdf/placeholder-pdf-lib';
import { SUBFILTER_ETSI_CADES_DETACHED } from '@signpdf/utils';
import {
  PDFArray,
  PDFDict,
  type PDFDocument,
  PDFHexString,
  PDFName,
  PDFNumber,
  type PDFPage,
  PDFString,
} from 'pdf-lib';

/** PAdES signature placeholder wanted in the output (ISO 32000-1, 12.8; ETSI EN 319 142-1). */
export interface SignaturePlaceholderOptions {
  /** Bytes reserved for the CMS signature (the /Contents hex string holds this many placeholder bytes). */
  signatureLength: number;
  reason: string;
  location: string;
  name: string;
  contactInfo: string;
}

/**
 * Adds the PAdES placeholder with `pdflibAddPlaceholder` on the last certificate page (invisible widget,
 * Rect [0 0 0 0]). An existing AcroForm is prepared first: indirect /Fields and /SigFlags are resolved so
 * the library extends them instead of replacing them, and the new field gets a name no existing field has.
 */
export function addSignaturePlaceholder(
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
