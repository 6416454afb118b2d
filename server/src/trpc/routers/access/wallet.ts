import { ShareAccessSchema, WalletAccessInputSchema } from '@notary/shared';
import { z } from 'zod';
import { accessByWallet } from '../../../domain/access/access';
import { publicProcedure } from '../../trpc';

/**
 * `POST /access/wallet/{documentId}` (spec) `{address, signature, message}`: EIP-191 signature over a fresh
 * message (plain with `Issued At:`, or SIWE) that contains the document id; single use (README, Sharing).
 */
export const walletAccess = publicProcedure
  .meta({
    openapi: {
      errorResponses: {
        400: 'Invalid address (not 0x plus 40 hex digits, or wrong EIP-55 checksum); malformed body',
        401: 'Invalid signature, message without the document id, stale or reused message, or wallet not authorized',
        410: "The wallet's access expired or reached its maximum accesses; document deleted under the LGPD",
      },
      method: 'POST',
      path: '/access/wallet/{documentId}',
      tags: ['sharing'],
      summary: 'Open a document shared with a wallet',
    },
  })
  .input(WalletAccessInputSchema.extend({ documentId: z.string() }))
  .output(ShareAccessSchema)
  .mutation(({ ctx, input }) => {
    const { documentId, ...body } = input;
    return accessByWallet(
      ctx.em(),
      ctx.deps.storage,
      { domain: new URL(ctx.deps.publicUrl).host },
      documentId,
      body,
      ctx.ip,
    );
  });
