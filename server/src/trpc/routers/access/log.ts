import { AccessLogSchema, ResourceId } from '@notary/shared';
import { z } from 'zod';
import { readAccessLog } from '../../../domain/sharing/access-log';
import { authedProcedure } from '../../trpc';

/**
 * `GET /access-log/{documentId}` (spec, Access log: at the server root as the spec lists it): the document's
 * accesses, newest first. Its owner only: the uploader while editor or higher, or an admin or owner of the organization.
 */
export const accessLog = authedProcedure
  .meta({
    openapi: {
      errorResponses: {
        401: 'Missing or invalid session token',
        403: "Document of another tenant, or not the document's owner",
        404: 'No such document',
      },
      method: 'GET',
      path: '/access-log/{documentId}',
      summary: "A document's access log",
      tags: ['sharing'],
      protect: true,
    },
  })
  .input(z.object({ documentId: ResourceId }))
  .output(AccessLogSchema)
  .query(({ ctx, input }) => readAccessLog(ctx.em(), ctx.actor, input.documentId));
