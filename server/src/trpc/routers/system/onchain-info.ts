import { OnchainInfoSchema } from '@notary/shared';
import { onchainInfo as describeChains } from '../../../domain/onchain/info';
import { publicProcedure } from '../../trpc';

/** `GET /api/onchain/info`: the configured networks (from configuration) and the endpoints verifiers may ask. */
export const onchainInfo = publicProcedure
  .meta({
    openapi: {
      protect: false,
      method: 'GET',
      path: '/api/onchain/info',
      tags: ['system'],
      summary: 'Configured chains',
    },
  })
  .output(OnchainInfoSchema)
  .query(({ ctx }) => describeChains(ctx.deps.config, ctx.deps.verifyEndpoints));
