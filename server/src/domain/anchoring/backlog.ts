import type { EntityManager } from '@mikro-orm/core';
import { AnchorTx, Document } from '../../db/entities';
import type { ChainKind } from '../../ports/chains';

/** One chain's anchoring backlog, as the operator watches it (metrics). */
export interface AnchoringBacklog {
  chain: ChainKind;
  /** Documents not yet registered on `chain`, LGPD-deleted ones left out (they are anchored all the same). */
  pending: number;
  /** When the oldest pending document was notarized; null when none is pending. */
  oldestPendingAt: Date | null;
  /** Anchoring transactions of `chain` in their final `failed` state. */
  failedTransactions: number;
}

/**
 * The anchoring backlog of each chain in `chains` (those the service anchors on): pending documents, the age of
 * the oldest, failed transactions. Three small queries per chain, for a scrape every few seconds at most.
 */
export async function anchoringBacklog(
  em: EntityManager,
  chains: readonly ChainKind[],
): Promise<AnchoringBacklog[]> {
  return Promise.all(
    chains.map(async (chain) => {
      const status = chain === 'evm' ? 'onchainStatus' : 'stacksStatus';
      const where = { [status]: 'pending', deletedAt: null };
      const [pending, oldest, failedTransactions] = await Promise.all([
        em.count(Document, where),
        em.findOne(Document, where, { orderBy: { createdAt: 'asc' }, fields: ['createdAt'] }),
        em.count(AnchorTx, { chain, state: 'failed' }),
      ]);
      return { chain, pending, oldestPendingAt: oldest?.createdAt ?? null, failedTransactions };
    }),
  );
}
