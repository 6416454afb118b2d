import { createHmac, timingSafeEqual } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import { AppError, CROCKFORD_ALPHABET } from '@notary/shared';
import { Document, type DocumentEntity } from '../../db/entities';

/**
 * ITI's VALIDAR (validar.iti.gov.br) reading a certificate's QR code: it asks its user for the access code
 * printed beside the QR code, then calls the QR code's URL with `_format=application/validador-iti+json` and
 * `_secretCode=<code>`, and expects `{version: '1.0.0', prescription: {signatureFiles: [{url}]}}`, `url` being
 * where it downloads the signed PDF to validate (ITI, "Guia de Orientações aos Desenvolvedores" of VALIDAR,
 * QR Code chapter; the shape as every integration of it implements it, version 1.0.0 of the protocol).
 */
export const VALIDAR_FORMAT = 'application/validador-iti+json';

/** The JSON VALIDAR expects back (protocol version 1.0.0). */
export interface ValidarAnswer {
  version: '1.0.0';
  prescription: { signatureFiles: { url: string }[] };
}

/** Characters of an access code: 10 Crockford base32 characters, 50 bits. */
export const VALIDAR_CODE_LENGTH = 10;

/**
 * Whether a query's `_format` asks for VALIDAR's answer. A `+` left unencoded in a query string reads as a
 * space (application/x-www-form-urlencoded), so `application/validador-iti json` is VALIDAR's too.
 */
export function isValidarFormat(format: unknown): boolean {
  return format === VALIDAR_FORMAT || format === VALIDAR_FORMAT.replace('+', ' ');
}

/**
 * The access code of `serialNumber` (upper case): the first 50 bits of HMAC-SHA256 over the serial, under a key
 * derived from the service secret with its own label, as 10 Crockford base32 characters. Printed only on the
 * certificate: the public URL alone never hands out the certificate (which names the file and its owner).
 * Stateless, so every certificate of a document prints the same code and every instance checks it.
 */
export function validarAccessCode(secret: string, serialNumber: string): string {
  const key = createHmac('sha256', secret).update('notary/validar-access-code/v1').digest();
  const mac = createHmac('sha256', key).update(serialNumber.toUpperCase()).digest();
  let bits = 0n;
  for (const byte of mac.subarray(0, 7)) bits = (bits << 8n) | BigInt(byte);
  let code = '';
  for (let i = VALIDAR_CODE_LENGTH - 1; i >= 0; i--)
    code += CROCKFORD_ALPHABET[Number((bits >> BigInt(5 * i + 6)) & 31n)];
  return code;
}

/**
 * `code` as typed by a person: upper case, spaces and hyphens dropped, Crockford's look-alikes read as the
 * characters they stand for (O→0, I/L→1). Anything longer than a code is cut so that nothing large is hashed.
 */
function normalizeCode(code: string): string {
  return code
    .slice(0, 4 * VALIDAR_CODE_LENGTH)
    .toUpperCase()
    .replace(/[\s-]/g, '')
    .replace(/O/g, '0')
    .replace(/[IL]/g, '1');
}

/** Whether `code` is `serialNumber`'s access code, compared in constant time. */
export function validarCodeMatches(secret: string, serialNumber: string, code: string): boolean {
  const expected = Buffer.from(validarAccessCode(secret, serialNumber));
  const actual = Buffer.from(normalizeCode(code));
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/**
 * The document of `serialNumber` when `code` is its access code.
 * @throws AppError NOT_FOUND for an unknown serial (serials are public: 404 tells nothing new);
 *   UNAUTHENTICATED (401) for a missing or wrong code, as a wallet that is not authorized (spec, Errors).
 */
export async function documentForValidar(
  em: EntityManager,
  secret: string,
  serialNumber: string,
  code: string | undefined,
): Promise<DocumentEntity> {
  const doc = await em.findOne(Document, { serialNumber });
  if (!doc) throw new AppError('NOT_FOUND', 'Serial number not found');
  if (!code || !validarCodeMatches(secret, doc.serialNumber, code)) {
    throw new AppError('UNAUTHENTICATED', 'Wrong or missing access code (_secretCode)');
  }
  return doc;
}

/** Where VALIDAR downloads the signed certificate of `serialNumber`: the public certificate route, with the code. */
export function validarCertificateUrl(publicUrl: string, serialNumber: string, code: string): string {
  return `${publicUrl}/api/public/documents/${encodeURIComponent(serialNumber)}/certificate?_secretCode=${encodeURIComponent(code)}`;
}

/**
 * VALIDAR's answer for `serialNumber` (`GET /api/public/documents/:serial?_format=...&_secretCode=...`): the URL
 * of its signed certificate, the code normalized.
 * @throws as `documentForValidar`.
 */
export async function validarAnswer(
  em: EntityManager,
  ctx: { secret: string; publicUrl: string },
  serialNumber: string,
  code: string | undefined,
): Promise<ValidarAnswer> {
  const doc = await documentForValidar(em, ctx.secret, serialNumber, code);
  const url = validarCertificateUrl(
    ctx.publicUrl,
    doc.serialNumber,
    validarAccessCode(ctx.secret, doc.serialNumber),
  );
  return { version: '1.0.0', prescription: { signatureFiles: [{ url }] } };
}
