import type { EntityManager } from '@mikro-orm/core';
import type { ServedAnchored } from '@notary/verify/anchored-checkpoint';
import { AnchorBatch, AnchorTx } from '../../db/entities';
import type { LogWitnessing } from '../log/witnessing';

/**
 * The newest checkpoint of the transparency log anchored on every configured chain (`GET /log/anchored`): the
 * checkpoint of the last batch whose every transaction is confirmed (status `anchored`), with the witnesses'
 * cosignatures collected for it, its leaf's place in the batch tree (the last leaf) and the batch's transactions,
 * for anyone to look up on the chains. `notary-verify --online` proves it consistent with the checkpoint anchored
 * with a receipt (`verifier/src/anchored-checkpoint.ts`). Undefined before the first such batch.
 */
export async function latestAnchoredCheckpoint(
  em: EntityManager,
  witnessing?: Pick<LogWitnessing, 'cosigned'>,
): Promise<ServedAnchored | undefined> {
  const [batch] = await em.find(
    AnchorBatch,
    { status: 'anchored', checkpointSize: { $ne: null } },
    { orderBy: { checkpointSize: 'desc', createdAt: 'desc' }, limit: 1 },
  );
  const place = batch?.checkpointProof;
  if (!batch || !place || batch.checkpointNote == null || batch.checkpointRoot == null) return undefined;
  const txs = await em.find(AnchorTx, { batch: batch.id }, { orderBy: { chain: 'asc' } });
  const checkpoint = {
    size: Number(batch.checkpointSize),
    root: new Uint8Array(batch.checkpointRoot),
    note: batch.checkpointNote,
  };
  return {
    checkpoint: witnessing ? await witnessing.cosigned(checkpoint) : checkpoint.note,
    batchRoot: batch.root,
    leafIndex: place.index,
    siblings: place.siblings.map((s) => ({ position: s.position, hash: s.hash })),
    anchors: txs.map((t) => ({ chain: t.chain, txHash: t.txHash ?? '', status: t.state })),
  };
}
