import { NotarySignedCertificateSchema, ResourceId } from '@notary/shared';
import { z } from 'zod';
import { certificateContext } from '../../../deps';
import { completeNotarySignature } from '../../../domain/certificates/notary-signature';
import { authedProcedure } from '../../trpc';
import { DOCUMENT_ERROR_RESPONSES } from './error-responses';

export const NotarySignatureCompleteInput = z.object({
  id: ResourceId,
  sessionId: z.uuid(),
  /** The signature value (base64): RSA PKCS#1 v1.5 bytes or a DER ECDSA value; 4096-bit RSA is 512 bytes. */
  signature: z.string().min(1).max(4096),
});

/**
 * `PUT /api/documents/{id}/notary-signature/{sessionId}` `{signature: base64}`: completes a prepared session
 * with the token's signature value and answers the signed certificate's record (docs/certificates.md). Only
 * the member who prepared it, once, before it expires.
 */
export const notarySignatureComplete = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        ...DOCUMENT_ERROR_RESPONSES,
        400: 'A signature that does not verify, or a certificate expired or revoked',
        403: 'Document of another tenant, or a session another member prepared',
        404: 'No such document, or no such session for it',
        409: 'Session already completed',
        410: 'Session expired',
        502: 'The TSA failed',
      },
      method: 'PUT',
      path: '/api/documents/{id}/notary-signature/{sessionId}',
      summary: "Complete the tabelião's signature with the token's signature value",
      tags: ['documents'],
      protect: true,
    },
  })
  .input(NotarySignatureCompleteInput)
  .output(NotarySignedCertificateSchema)
  .mutation(({ ctx, input }) =>
    completeNotarySignature(ctx.em(), certificateContext(ctx.deps), ctx.actor, input),
  );
