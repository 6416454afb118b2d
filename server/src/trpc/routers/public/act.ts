import { MneInput, PublicDocumentSchema } from '@notary/shared';
import { z } from 'zod';
import { findByMne } from '../../../domain/acts/service';
import { publicProcedure } from '../../trpc';

/**
 * `GET /api/public/acts/{mne}`: the public projection of the document an MNE was recorded for, the same answer
 * as `GET /api/public/documents/{serial}`; 400 a wrong MNE (naming what is wrong), 404 unknown.
 */
export const publicDocumentByMne = publicProcedure
  .meta({
    openapi: {
      protect: false,
      errorResponses: {
        400: 'Not an MNE: wrong format, impossible date or wrong check digits',
        404: 'No document holds this MNE',
      },
      method: 'GET',
      path: '/api/public/acts/{mne}',
      tags: ['public'],
      summary: 'Look up a notarial act by its MNE',
    },
    // An MNE lookup is a public verification (spec, Limits): one budget with the serial and hash lookups.
    rateLimit: 'publicVerify',
  })
  .input(z.object({ mne: MneInput }))
  .output(PublicDocumentSchema)
  .query(({ ctx, input }) => findByMne(ctx.em(), input.mne));
