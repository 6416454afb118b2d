import { NotaryPolicySchema, ResourceId } from '@notary/shared';
import { z } from 'zod';
import { certificateContext } from '../../../deps';
import {
  NOTARY_MAX_CERTIFICATES,
  prepareNotarySignature,
} from '../../../domain/certificates/notary-signature';
import { authedProcedure } from '../../trpc';
import { DOCUMENT_ERROR_RESPONSES } from './error-responses';

/** One DER certificate in base64 (an ICP-Brasil certificate is a few KB; 64 KB bounds a hostile one). */
const Base64Der = z.string().min(1).max(65_536);

/** What the client announces: its chain, leaf first, and the ICP-Brasil policy to sign under. */
export const NotarySignaturePrepareInput = z.object({
  id: ResourceId,
  certificates: z.array(Base64Der).min(1).max(NOTARY_MAX_CERTIFICATES),
  policy: NotaryPolicySchema,
  lang: z.enum(['pt', 'en']).default('pt'),
});

export const NotarySignaturePrepared = z.object({
  sessionId: z.uuid(),
  signedAttributes: z.string(),
  digestAlgorithm: z.literal('SHA-256'),
  expiresAt: z.string(),
});

/**
 * `POST /api/documents/{id}/notary-signature` `{certificates: [base64 DER, leaf first], policy}`: prepares the
 * tabelião's own signature of the document's certificate and answers what the token must sign
 * (`{sessionId, signedAttributes, digestAlgorithm, expiresAt}`; docs/certificates.md). Editor or higher.
 */
export const notarySignaturePrepare = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        ...DOCUMENT_ERROR_RESPONSES,
        400: 'Invalid body, or a chain that is incomplete, expired, without key usage for signatures',
        403: 'Document of another tenant, or below editor in the organization',
        503: 'AD-RT asked and no TSA configured',
      },
      method: 'POST',
      path: '/api/documents/{id}/notary-signature',
      summary: "Prepare the tabelião's own signature of the certificate (deferred signing)",
      tags: ['documents'],
      protect: true,
    },
  })
  .input(NotarySignaturePrepareInput)
  .output(NotarySignaturePrepared)
  .mutation(({ ctx, input }) =>
    prepareNotarySignature(ctx.em(), certificateContext(ctx.deps), ctx.actor, input),
  );
