import { PDFDocument } from 'pdf-lib';
import { attachFile } from './attachment';
import { createCertificatePages, placeScreenshot } from './certificate-page';
import { embedFonts } from './fonts';
import { stringsFor } from './i18n';
import type { CertificateData } from './model';
import { makePdfA3b, PDFA_SEPARATE } from './pdfa';
import { addSignaturePlaceholder } from './placeholder';
import type { StampOptions } from './stamp-source';

/**
 * The standalone certificate of `data` (its own PDF; nothing of an original is parsed). `screenshot` says how a
 * web capture's screenshot is treated (`placeScreenshot`): `decode` only in the bounded stamping worker,
 * `header-only` anywhere else (a screenshot is then left out, with the sentence saying so). The file is
 * PDF/A-3b (`PDFA_SEPARATE`, `pdfa.ts`); the receipt and any other attachment are associated files.
 */
export async function renderSeparate(
  data: CertificateData,
  options: StampOptions,
  screenshot: 'decode' | 'header-only',
): Promise<Uint8Array> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const s = stringsFor(options.lang);
  // PDF/A-3b (ISO 19005-3): Info and XMP with the same values, the sRGB output intent, a trailer /ID. The
  // exact file name, whatever its script, is the title: document metadata is UTF-16 text (7.9.2.2).
  makePdfA3b(
    doc,
    {
      title: data.document.fileName,
      subject: `${s.title} — ${s.certificateNo(data.document.serialNumber)}`,
      author: data.serviceName,
      creator: data.serviceName,
      producer: data.serviceName,
      created: data.issuedAt,
      modified: data.issuedAt,
    },
    `${data.document.id} ${data.issuedAt.toISOString()} ${options.lang}`,
  );
  doc.setLanguage(options.lang === 'en' ? 'en' : 'pt-BR');
  const fonts = await embedFonts(doc);
  const shot = placeScreenshot(doc, data, screenshot);
  const pages = createCertificatePages(doc, fonts, data, {
    lang: options.lang,
    originalBytes: null,
    pdfa: { produced: PDFA_SEPARATE },
    ...(shot ? { screenshot: shot } : {}),
  });
  for (const page of pages) doc.addPage(page);
  for (const file of options.attachments ?? []) attachFile(doc, file);
  if (options.signaturePlaceholder) addSignaturePlaceholder(doc, pages, options.signaturePlaceholder);
  return doc.save({ useObjectStreams: false, addDefaultPage: false, updateFieldAppearances: false });
}
