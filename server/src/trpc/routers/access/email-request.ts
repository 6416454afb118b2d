import { EmailAccessRequestInputSchema, EmailAccessRequestSchema, ResourceId } from '@notary/shared';
import { requestEmailAccess } from '../../../domain/sharing/access';
import { servesDevelopmentConveniences } from '../../local-request';
import { publicProcedure } from '../../trpc';

/**
 * `POST /access/email/{documentId}/request` (spec, Public, no credentials) `{email}`: the same answer whether
 * or not the address is
 * authorized; `token` only in development, and there only to a request made directly from this machine (no proxy
 * header, loopback peer) to a service whose `PUBLIC_URL` is on this machine too (`servesDevelopmentConveniences`):
 * through a reverse proxy or from elsewhere the answer is the production one, which the spec allows in every mode. Nothing is sent (delivery not wired, spec).
 */
export const emailAccessRequest = publicProcedure
  .meta({
    openapi: {
      protect: false,
      errorResponses: { 400: 'Missing or malformed e-mail address' },
      method: 'POST',
      path: '/access/email/{documentId}/request',
      tags: ['sharing'],
      summary: 'Ask for an e-mail access link (not delivered: not wired)',
    },
  })
  .input(EmailAccessRequestInputSchema.extend({ documentId: ResourceId }))
  .output(EmailAccessRequestSchema)
  .mutation(({ ctx, input }) =>
    requestEmailAccess(
      ctx.em(),
      {
        secret: ctx.deps.secret,
        development: servesDevelopmentConveniences(
          ctx.deps.config.env,
          ctx.deps.publicUrl,
          ctx.directLoopback,
        ),
      },
      input.documentId,
      input.email,
    ),
  );
