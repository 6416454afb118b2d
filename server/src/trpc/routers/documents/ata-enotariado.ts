import { ResourceId } from '@notary/shared';
import { z } from 'zod';
import { enotariadoBody } from '../../../domain/certificates/ata';
import { authedProcedure } from '../../trpc';
import { LIVE_DOCUMENT_ERROR_RESPONSES } from './error-responses';

/** The body of e-Notariado's `POST /api/documents` (docs/enotariado-notarial-minutes.schema.json). */
const EnotariadoBodySchema = z.object({
  type: z.literal('NotarialMinutes'),
  title: z.string(),
  findings: z.object({ isDigital: z.literal(true) }),
  signers: z.array(z.object({ name: z.string(), cpf: z.string(), email: z.string().optional() })),
});

/**
 * `GET /api/documents/:id/ata/enotariado`: the JSON body a cartório's own integration sends to e-Notariado's signing
 * flow (`POST /api/documents`) for the ata of this web capture, from the requester kept by the last
 * `POST /api/documents/:id/ata`. This service never sends it. Any member of the tenant.
 */
export const ataEnotariado = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        ...LIVE_DOCUMENT_ERROR_RESPONSES,
        400: 'Not a web capture',
        404: 'No such document, or no ata draft requested for it',
      },
      method: 'GET',
      path: '/api/documents/{id}/ata/enotariado',
      summary:
        "Body of e-Notariado's signing-flow POST /api/documents for this capture's ata notarial (type NotarialMinutes, findings.isDigital, the requester as signer); prepared, never sent",
      tags: ['documents'],
      protect: true,
    },
  })
  .input(z.object({ id: ResourceId }))
  .output(EnotariadoBodySchema)
  .query(({ ctx, input }) =>
    enotariadoBody(
      ctx.em(),
      {
        config: ctx.deps.config,
        publicUrl: ctx.deps.publicUrl,
        secret: ctx.deps.secret,
        storage: ctx.deps.storage,
        captureRecords: ctx.deps.captureRecords,
        attachMaxBytes: ctx.deps.config.capture.ataAttachMaxBytes,
      },
      ctx.actor,
      input.id,
    ),
  );
