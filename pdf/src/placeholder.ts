import { pdflibAddPlaceholder } from '@signpdf/placeholder-pdf-lib';
import { SUBFILTER_ETSI_CADES_DETACHED } from '@signpdf/utils';
import {
  PDFArray,
  PDFDict,
  type PDFDocument,
  PDFHexString,
  PDFInvalidObject,
  PDFName,
  PDFNumber,
  type PDFPage,
  PDFRef,
  PDFString,
} from 'pdf-lib';
import { PBAD_FILTER, PBAD_SUBFILTER } from './icp-brasil';

/** PAdES signature placeholder wanted in the output (ISO 32000-1, 12.8; ETSI EN 319 142-1). */
export interface SignaturePlaceholderOptions {
  /** Bytes reserved for the CMS signature (the /Contents hex string holds this many placeholder bytes). */
  signatureLength: number;
  reason: string;
  location: string;
  name: string;
  contactInfo: string;
  /**
   * Signature dictionary flavour: `etsi` (default) `/Filter /Adobe.PPKLite /SubFilter /ETSI.CAdES.detached`
   * (ETSI EN 319 142-1); `icp-brasil` `/Filter /PBAD_PAdES /SubFilter /PBAD.PAdES` (DOC-ICP-15.03 Tabela A.18).
   */
  dictionary?: 'etsi' | 'icp-brasil';
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
    subFilter: options.dictionary === 'icp-brasil' ? PBAD_SUBFILTER : SUBFILTER_ETSI_CADES_DETACHED,
    widgetRect: [0, 0, 0, 0],
  });
  const annots = page.node.lookup(PDFName.of('Annots'));
  const widget = annots instanceof PDFArray ? doc.context.lookup(annots.get(annots.size() - 1)) : undefined;
  if (!(widget instanceof PDFDict)) throw new Error('signature placeholder: the widget was not added');
  let name = 'Certification';
  for (let i = 2; existingNames.has(name); i += 1) name = `Certification${i}`;
  widget.set(PDFName.of('T'), PDFString.of(name));
  if (options.dictionary === 'icp-brasil') setPbadFilter(doc, widget);
}

/**
 * pdflibAddPlaceholder writes `/Filter /Adobe.PPKLite` whatever the SubFilter, and registers the signature
 * dictionary as raw bytes (so pdf-lib does not put it in an object stream): the top-level /Filter is swapped
 * in those bytes for Tabela A.18's `/PBAD_PAdES` (the /Prop_Build /Filter sub-dictionary stays Adobe's).
 */
function setPbadFilter(doc: PDFDocument, widget: PDFDict): void {
  const ref = widget.get(PDFName.of('V'));
  const raw = ref instanceof PDFRef ? doc.context.lookup(ref) : undefined;
  if (!(ref instanceof PDFRef) || !(raw instanceof PDFInvalidObject)) {
    throw new Error('signature placeholder: the signature dictionary is not where @signpdf puts it');
  }
  const bytes = new Uint8Array(raw.sizeInBytes());
  raw.copyBytesInto(bytes, 0);
  const text = Buffer.from(bytes).toString('latin1');
  const adobe = '/Filter /Adobe.PPKLite';
  const at = text.indexOf(adobe);
  if (at === -1 || text.indexOf(adobe, at + 1) !== -1) {
    throw new Error('signature placeholder: expected exactly one /Filter /Adobe.PPKLite to replace');
  }
  const replaced = `${text.slice(0, at)}/Filter /${PBAD_FILTER}${text.slice(at + adobe.length)}`;
  doc.context.assign(ref, PDFInvalidObject.of(new Uint8Array(Buffer.from(replaced, 'latin1'))));
}
