import { PDFDocument } from 'pdf-lib';
import { attachFile } from './attachment';
import { createCertificatePages, placeScreenshot } from './certificate-page';
import { embedFonts } from './fonts';
import { stringsFor } from './i18n';
import type { CertificateData } from './model';
import { addSignaturePlaceholder } from './placeholder';
import type { StampOptions } from './stamp-source';

/**
 * The standalone certificate of `data` (its own PDF; nothing of an original is parsed). `screenshot` says how a
 * web capture's screenshot is treated (`placeScreenshot`): `decode` only in the bounded stamping worker,
 * `header-only` anywhere else (a screenshot is then left out, with the sentence saying so).
 */
export async function renderSeparate(
  data: CertificateData,
  options: StampOptions,
  screenshot: 'decode' | 'header-only',
): Promise<Uint8Array> {
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
  const shot = placeScreenshot(doc, data, screenshot);
  const pages = createCertificatePages(doc, fonts, data, {
    lang: options.lang,
    originalBytes: null,
    ...(shot ? { screenshot: shot } : {}),
  });
  for (const page of pages) doc.addPage(page);
  for (const file of options.attachments ?? []) attachFile(doc, file);
  if (options.signaturePlaceholder) addSignaturePlaceholder(doc, pages, options.signaturePlaceholder);
  return doc.save({ useObjectStreams: false, addDefaultPage: false, updateFieldAppearances: false });
}
