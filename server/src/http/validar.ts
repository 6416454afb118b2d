import { SerialNumber } from '@notary/shared';
import type { RequestHandler } from 'express';
import { z } from 'zod';
import type { AppDeps } from '../deps';
import { isValidarFormat, validarAnswer } from '../domain/certificates/validar';
import { PUBLIC_VERIFY_RATE_LIMIT } from '../trpc/routers/public/verify';
import { corsPolicy } from './cors';
import { rateLimited } from './rate-limit';
import { publicRoute } from './route';

/** Where the certificate's QR code points: the public record of a serial (spec, Public, no credentials). */
export const PUBLIC_SERIAL_PATH = '/api/public/documents/:serial';

/** VALIDAR's web origin: should its page call the QR code's URL from the browser, CORS lets it read the answer. */
export const VALIDAR_ORIGIN = 'https://validar.iti.gov.br';

/**
 * The CORS policy of VALIDAR's two calls: the service's own (`ALLOWED_ORIGINS`, its own origin, no Origin at
 * all) plus VALIDAR's origin; any other browser origin gets 403 as everywhere.
 */
export function validarCors(deps: AppDeps): RequestHandler {
  return corsPolicy([...deps.config.allowedOrigins, VALIDAR_ORIGIN], () => deps.publicUrl);
}

/** The query of a VALIDAR call: the access code as typed, at most a few times a code's length. */
export const ValidarQuery = z.object({
  serial: SerialNumber,
  _secretCode: z.string().max(64).optional(),
});

/**
 * `GET /api/public/documents/:serial?_format=application/validador-iti+json&_secretCode=<code>`: ITI's VALIDAR
 * reading the certificate's QR code (`domain/certificates/validar.ts`). Answers 200
 * `{version: '1.0.0', prescription: {signatureFiles: [{url}]}}`, `url` being the public certificate route
 * with the code; 400 malformed serial; 401 wrong or missing code; 404 unknown serial; 429 over the public
 * verification limit (a serial lookup's own budget, spec Limits). Without that `_format`, the request goes on
 * to the serial lookup (public projection) unchanged. Mount before the service's CORS policy (`validarCors`
 * applies to VALIDAR's calls only) and the REST router.
 */
export function validarRoute(deps: AppDeps): RequestHandler {
  const cors = validarCors(deps);
  const limited = rateLimited(deps, ['global', PUBLIC_VERIFY_RATE_LIMIT]);
  const answer = publicRoute(async ({ req, res }) => {
    const input = ValidarQuery.parse({ serial: req.params.serial, _secretCode: req.query._secretCode });
    const body = await validarAnswer(deps.db.fork(), deps, input.serial, input._secretCode);
    // The answer names a URL that hands out the certificate: no cache keeps it.
    res.setHeader('Cache-Control', 'no-store');
    res.status(200).json(body);
  });
  return (req, res, next) => {
    if (!isValidarFormat(req.query._format)) {
      next();
      return;
    }
    cors(req, res, () => limited(req, res, () => answer(req, res, next)));
  };
}
