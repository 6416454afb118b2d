import { PublicDocumentSchema, SerialNumber } from '@notary/shared';
import { z } from 'zod';
import { findBySerial } from '../../../domain/documents/service';
import { publicProcedure } from '../../trpc';

/** `GET /api/public/documents/:serial`: public projection; 400 malformed serial, 404 unknown. */
export const publicDocumentBySerial = publicProcedure
  .meta({
    openapi: {
      protect: false,
      errorResponses: { 400: 'Malformed serial number', 404: 'Unknown serial number' },
      method: 'GET',
      path: '/api/public/documents/{serial}',
      tags: ['public'],
      summary: 'Look up a serial number',
      description:
        "Also the target of the certificate's QR code: with `_format=application/validador-iti+json` and `_secretCode=<access code printed on the certificate>` (ITI's VALIDAR) it answers `{version: '1.0.0', prescription: {signatureFiles: [{url}]}}` instead, `url` naming GET /api/public/documents/{serial}/certificate; 401 for a wrong or missing code.",
    },
    // A serial lookup is a public verification (spec, Limits): one budget with verify by hash.
    rateLimit: 'publicVerify',
  })
  .input(z.object({ serial: SerialNumber }))
  .output(PublicDocumentSchema)
  .query(({ ctx, input }) => findBySerial(ctx.em(), input.serial));
