import { ResourceId, ShareAccessSchema, WalletAccessInputSchema } from '@notary/shared';
import { accessByWallet } from '../../../domain/sharing/access';
import { publicProcedure } from '../../trpc';

/**
 * `POST /access/wallet/{documentId}` (spec, Public, no credentials) `{address, signature, message}`: EIP-191
 * signature over a fresh
 * Sign-In With Ethereum (EIP-4361) message for this service (domain and URI of `PUBLIC_URL`) that names the
 * document id; single use (docs/sharing.md, Wallet messages).
 */
export const walletAccess = publicProcedure
  .meta({
    openapi: {
      protect: false,
      errorResponses: {
        400: 'Invalid address (not 0x plus 40 hex digits, or wrong EIP-55 checksum); malformed body',
        401: 'Invalid signature; not a Sign-In With Ethereum message for this service; message without the document id; stale or reused message; wallet not authorized',
        410: "The wallet's access expired or reached its maximum accesses; document deleted under the LGPD",
      },
      method: 'POST',
      path: '/access/wallet/{documentId}',
      tags: ['sharing'],
      summary: 'Open a document shared with a wallet',
    },
  })
  .input(WalletAccessInputSchema.extend({ documentId: ResourceId }))
  .output(ShareAccessSchema)
  .mutation(({ ctx, input }) => {
    const { documentId, ...body } = input;
    return accessByWallet(ctx.em(), ctx.deps, { publicUrl: ctx.deps.publicUrl }, documentId, body, ctx.ip);
  });
