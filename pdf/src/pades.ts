/**
 * PAdES signing of the notarization certificate PDF (issue 5; ETSI EN 319 142-1 baseline B-B, B-T with a
 * TSA). `@signpdf/signpdf` fills `/ByteRange` and `/Contents` of the placeholder the renderer added;
 * `cades.ts` builds the CMS.
 */
import { SignPdf } from '@signpdf/signpdf';
import { findByteRange, Signer } from '@signpdf/utils';
import { buildCadesSignature, type CmsSigner, type SignatureTimestamper } from './cades';

/**
 * `signatureLength` to pass to `pdflibAddPlaceholder`: the number of hex digits of the `/Contents <...>`
 * placeholder (that is what @signpdf/placeholder-pdf-lib counts), so the CMS may take half as many bytes,
 * `PADES_MAX_CMS_BYTES` (16 KiB). Measured with the test PKI (RSA-2048, 3-certificate chains): B-B about
 * 3.2 KiB, B-T about 6.4 KiB (the TSA token brings its own chain). 16 KiB leaves room for RSA-4096 chains
 * and the larger tokens of public TSAs.
 */
export const PADES_SIGNATURE_LENGTH = 32768;

/** Largest CMS, in bytes, that fits a placeholder of `PADES_SIGNATURE_LENGTH` hex digits. */
export const PADES_MAX_CMS_BYTES = PADES_SIGNATURE_LENGTH / 2;

/** `@signpdf` signer that produces our CAdES CMS; `signingTime` is ignored (PAdES puts the time in /M). */
class CadesSigner extends Signer {
  constructor(
    private readonly signer: CmsSigner,
    private readonly capacity: number,
    private readonly tsa: SignatureTimestamper | undefined,
  ) {
    super();
  }

  override async sign(pdfBuffer: Buffer): Promise<Buffer> {
    const cms = await buildCadesSignature(new Uint8Array(pdfBuffer), this.signer, this.tsa);
    if (cms.byteLength > this.capacity) {
      throw new Error(
        `PAdES: the CMS signature is ${cms.byteLength} bytes but the PDF placeholder holds ${this.capacity}; ` +
          `add the placeholder with signatureLength (hex digits) >= ${cms.byteLength * 2} (PADES_SIGNATURE_LENGTH)`,
      );
    }
    return Buffer.from(cms);
  }
}

/**
 * Signs a PDF that already has a signature placeholder (`/ByteRange [0 /********** ...]` and
 * `/Contents <00...>`, e.g. from `pdflibAddPlaceholder` with subFilter `ETSI.CAdES.detached` and
 * `signatureLength: PADES_SIGNATURE_LENGTH`).
 *
 * @param pdfWithPlaceholder the full PDF bytes (a trailing newline is dropped, as `@signpdf` does).
 * @param tsa when given, the signature gets an RFC 3161 signature timestamp (PAdES B-T).
 * @returns the signed PDF: same bytes except `/ByteRange` and `/Contents`.
 * @throws Error when there is no (or more than one) placeholder, or when the CMS does not fit the
 *   placeholder; the signer's errors; the TSA's (the server's TSA adapter: `AppError('BAD_GATEWAY')`).
 */
export async function signPdf(
  pdfWithPlaceholder: Uint8Array,
  signer: CmsSigner,
  tsa?: SignatureTimestamper,
): Promise<Uint8Array> {
  const pdf = Buffer.from(pdfWithPlaceholder);
  const signed = await new SignPdf().sign(pdf, new CadesSigner(signer, placeholderCapacity(pdf), tsa));
  return new Uint8Array(signed);
}

/** Bytes the `/Contents <...>` placeholder after the `/ByteRange` placeholder can hold (same scan as @signpdf). */
function placeholderCapacity(pdf: Buffer): number {
  const { byteRangePlaceholder, byteRangePlaceholderPosition } = findByteRange(pdf);
  if (byteRangePlaceholder === undefined || byteRangePlaceholderPosition === undefined) {
    throw new Error('PAdES: the PDF has no signature placeholder (/ByteRange [0 /********** ...])');
  }
  const contents = pdf.indexOf('/Contents ', byteRangePlaceholderPosition + byteRangePlaceholder.length);
  const open = contents === -1 ? -1 : pdf.indexOf('<', contents);
  const close = open === -1 ? -1 : pdf.indexOf('>', open);
  if (close === -1)
    throw new Error('PAdES: the signature placeholder has no /Contents <...> after /ByteRange');
  return Math.floor((close - open - 1) / 2);
}
