import { AppError, ShareAccessSchema } from '@notary/shared';
import { z } from 'zod';
import { publicProcedure } from '../../trpc';

/**
 * `GET /access/email/verify/{token}` (spec, Public, no credentials): e-mail magic-link verification is not
 * implemented: always 501.
 */
export const emailAccessVerify = publicProcedure
  .meta({
    openapi: {
      protect: false,
      errorResponses: { 501: 'Always: e-mail magic-link verification is not implemented' },
      method: 'GET',
      path: '/access/email/verify/{token}',
      tags: ['sharing'],
      summary: 'E-mail magic-link verification (not implemented)',
    },
  })
  .input(z.object({ token: z.string() }))
  .output(ShareAccessSchema)
  .query(() => {
    throw new AppError('NOT_IMPLEMENTED', 'E-mail magic-link verification is not implemented');
  });
