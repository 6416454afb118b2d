/**
 * Names and content checks of the files the client saves (certificate PDF, RFC 3161 timestamp response).
 * The server's `Content-Disposition` is never used as a name: a hostile or compromised server could name a
 * path (`../../evil.sh`) or an executable. Names are built here from the document's serial number (checked
 * against the serial pattern, so only `A-Z`, `0-9` and one `-`), and the bytes are checked to be of the kind
 * asked for before anything is written.
 *
 * Platform-neutral: used by Electron's main process and the web client alike.
 */
import { SERIAL_PATTERN } from '@notary/shared';
import type { Language } from './bridge';
import { ClientError } from './errors';

/** `%PDF-`: the header every PDF file starts with (ISO 32000-2, section 7.5.2). */
const PDF_HEADER = [0x25, 0x50, 0x44, 0x46, 0x2d] as const;
/** Tag of a DER SEQUENCE, constructed (X.690, section 8.9): `TimeStampResp` is one (RFC 3161, section 2.4.2). */
const DER_SEQUENCE = 0x30;

/** The serial number when it has the service's shape (`<PREFIX>-<CODE>`), else null (never used in a name). */
function safeSerial(serial: string): string | null {
  return SERIAL_PATTERN.test(serial) ? serial : null;
}

/**
 * File name of a certificate: `certificado-<serial>.pdf` (Portuguese) or `certificate-<serial>.pdf`
 * (English), the names the service itself uses; without the serial when it does not have the serial shape.
 */
export function certificateFileName(serial: string, language: Language): string {
  const base = language === 'en' ? 'certificate' : 'certificado';
  const s = safeSerial(serial);
  return s ? `${base}-${s}.pdf` : `${base}.pdf`;
}

/** File name of a timestamp response: `<serial>.tsr` (the service's name), else `timestamp.tsr`. */
export function timestampFileName(serial: string): string {
  const s = safeSerial(serial);
  return s ? `${s}.tsr` : 'timestamp.tsr';
}

/**
 * File name of a certidão de permanência: `certidao-permanencia-<serial>.pdf` after its document's serial
 * (`X-Serial-Number`), else `certidao-permanencia.pdf`.
 */
export function certidaoFileName(serial: string | null): string {
  const s = serial === null ? null : safeSerial(serial);
  return s ? `certidao-permanencia-${s}.pdf` : 'certidao-permanencia.pdf';
}

/**
 * Checks that `bytes` is a PDF: it starts with `%PDF-`.
 * @throws ClientError `invalid-content` otherwise (nothing must be written).
 */
export function assertPdf(bytes: Uint8Array): void {
  if (bytes.length < PDF_HEADER.length || PDF_HEADER.some((b, i) => bytes[i] !== b)) {
    throw new ClientError({
      kind: 'invalid-content',
      message:
        'The server sent a certificate that is not a PDF (it does not start with %PDF-); nothing was saved',
    });
  }
}

/**
 * Checks that `bytes` is one DER SEQUENCE spanning the whole answer, as a `TimeStampResp` (RFC 3161, section
 * 2.4.2) is: tag 0x30, then a definite length (X.690, section 8.1.3) equal to the bytes that follow.
 * @throws ClientError `invalid-content` otherwise (nothing must be written).
 */
export function assertDerSequence(bytes: Uint8Array): void {
  const refuse = (why: string) =>
    new ClientError({
      kind: 'invalid-content',
      message: `The server sent a timestamp that is not an RFC 3161 response (${why}); nothing was saved`,
    });
  if (bytes.length < 2 || bytes[0] !== DER_SEQUENCE) throw refuse('it is not a DER SEQUENCE');
  const first = bytes[1] ?? 0;
  let length: number;
  let offset: number;
  if (first < 0x80) {
    length = first;
    offset = 2;
  } else {
    // Long form: the low 7 bits count the length octets; 0x80 alone is BER's indefinite form, not DER.
    const count = first & 0x7f;
    if (count === 0 || count > 4 || bytes.length < 2 + count) throw refuse('its length is not DER');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + (bytes[2 + i] ?? 0);
    offset = 2 + count;
  }
  if (offset + length !== bytes.length) throw refuse('its length does not match the answer');
}
