import { createPrivateKey, sign as cryptoSign } from 'node:crypto';
import { attachFile, type PdfAttachment } from '@notary/pdf/attachment';
import type { CmsSigner } from '@notary/pdf/cades';
import { PADES_SIGNATURE_LENGTH } from '@notary/pdf/pades';
import { pdflibAddPlaceholder } from '@signpdf/placeholder-pdf-lib';
import { SUBFILTER_ETSI_CADES_DETACHED } from '@signpdf/utils';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { pemToDer } from './pki';

/**
 * PDFs ready to be signed, and a signer over PEM files, for the tests of the PAdES writer, the verifier, the
 * desktop app and the service: a one-page PDF with a signature placeholder (ISO 32000-1 12.8, `/SubFilter
 * /ETSI.CAdES.detached` of ETSI EN 319 142-1 unless told) saved without object streams, as the service's
 * renderer leaves a certificate. Only `@notary/pdf`, pdf-lib and @signpdf: the verifier's and the desktop's
 * tests import it without reaching the server.
 */

/** The signature placeholder wanted (the signature dictionary's fields and the /Contents room). */
export interface PlaceholderOptions {
  /** Bytes reserved for the CMS (`/Contents` holds twice as many hex digits); `PADES_SIGNATURE_LENGTH` unless told. */
  signatureLength?: number;
  /** `/SubFilter`; `ETSI.CAdES.detached` unless told (e.g. `PBAD.PAdES`, written the same way). */
  subFilter?: string;
  /** `/Name`, `/Reason`, `/ContactInfo`, `/Location`: the service's own ("Notary") unless told. */
  signer?: { name: string; reason: string; contactInfo: string; location: string };
}

/** The page's text and Info of `placeholderPdf`. */
export interface PlaceholderPdfOptions extends PlaceholderOptions {
  /** The one line of the page, 18 pt; "Certificate of notarization" unless told. */
  text?: string;
  /** A second line, 8 pt, below it. */
  note?: string;
  /** The Info dictionary's /Title. */
  title?: string;
  /** A file embedded before the placeholder (a `receipt.json`, so the command line takes the PDF alone). */
  attach?: PdfAttachment;
}

const SERVICE_SIGNER = {
  name: 'Notary',
  reason: 'Notarization certificate',
  contactInfo: 'notary@example.test',
  location: 'Test',
};

/** Adds a signature placeholder (invisible widget, Rect [0 0 0 0]) to `doc`'s first page. */
export function addPlaceholder(doc: PDFDocument, options: PlaceholderOptions = {}): void {
  pdflibAddPlaceholder({
    pdfDoc: doc,
    ...(options.signer ?? SERVICE_SIGNER),
    // The placeholder writer types its SubFilter as the ETSI one; PBAD.PAdES is written the same way.
    subFilter: (options.subFilter ?? SUBFILTER_ETSI_CADES_DETACHED) as typeof SUBFILTER_ETSI_CADES_DETACHED,
    signatureLength: options.signatureLength ?? PADES_SIGNATURE_LENGTH,
    widgetRect: [0, 0, 0, 0],
  });
}

/** A one-page A4 PDF with a signature placeholder, no object streams (so @signpdf and `signPdf` find it). */
export async function placeholderPdf(options: PlaceholderPdfOptions = {}): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  if (options.title) doc.setTitle(options.title);
  const page = doc.addPage([595, 842]);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  page.drawText(options.text ?? 'Certificate of notarization', { x: 50, y: 780, size: 18, font });
  if (options.note) page.drawText(options.note, { x: 50, y: 740, size: 8, font });
  if (options.attach) attachFile(doc, options.attach);
  addPlaceholder(doc, options);
  return doc.save({ useObjectStreams: false });
}

/**
 * A `CmsSigner` over a PEM private key and its chain PEM (signer, intermediate, root, in that order, as the test
 * PKIs write `chainPem`), signing with node:crypto: PKCS#1 v1.5 for RSA, a DER Ecdsa-Sig-Value for EC P-256.
 */
export function pemCmsSigner(
  keyPem: string,
  chainPem: string,
  algorithm: CmsSigner['algorithm'] = 'RSASSA-PKCS1-v1_5-SHA256',
): CmsSigner {
  const key = createPrivateKey(keyPem);
  const chain = [...chainPem.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)];
  return {
    certificateChain: chain.map((m) => pemToDer(m[0])),
    algorithm,
    sign: async (data) => new Uint8Array(cryptoSign('sha256', data, key)),
  };
}
