import { MAIL_LANGUAGES } from '@notary/shared';
import { z } from 'zod';
import { pickMailLanguage } from '../../../domain/mail/invitation';
import { requestOrganizationDeletion } from '../../../domain/org/deletion';
import { deletionCodeKey } from '../../../domain/org/deletion-code';
import { authedProcedure } from '../../trpc';
import { OrgOkSchema } from './schemas';

/**
 * `POST /api/org/delete/request` (spec, Organization): e-mails a 6-digit code, valid 10 minutes, to the
 * requester (admin or owner), replacing any pending code. The spec's request is empty; the optional `lang`
 * (`pt`, `en`) picks the language of the code mail and of the members' notice, else the request's
 * `Accept-Language`, else Portuguese (as the team invitation does).
 */
export const deleteRequest = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'No active organization, or the requester has no e-mail address',
        401: 'Missing or invalid session token',
        403: 'Below admin in the organization',
        409: 'Documents of the organization are held under a retention rule (a notarial act, or the serventia retention; LGPD art. 16 I): nothing happens until the operator lifts the hold',
        429: 'More than 5 requests for this organization within an hour',
        502: 'The mail server refused the code mail',
        503: 'E-mail is not configured on the server',
      },
      method: 'POST',
      path: '/api/org/delete/request',
      summary: 'Request the deletion of the organization (mails a confirmation code to the owner)',
      tags: ['org'],
      protect: true,
    },
  })
  .input(z.object({ lang: z.enum(MAIL_LANGUAGES).optional() }).optional())
  .output(OrgOkSchema)
  .mutation(({ ctx, input }) =>
    requestOrganizationDeletion(
      ctx.em(),
      { mailer: ctx.deps.mailer, codeKey: deletionCodeKey(ctx.deps.secret) },
      ctx.actor,
      { lang: pickMailLanguage(ctx.acceptLanguage, input?.lang) },
    ),
  );
