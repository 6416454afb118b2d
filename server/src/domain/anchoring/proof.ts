import type { EntityManager } from '@mikro-orm/core';
import { DocumentAnchor } from '../../db/entities';
import { findDocumentInTenant } from '../documents/service';
import type { Actor } from '../tenancy/actor';
import type { MerkleProof } from './merkle';

/** A document's place in its anchoring batch, as its owner receives it (`GET /api/documents/:id/anchor-proof`). */
export interface AnchorProofView {
  /** Null until the document is in a batch (the next collection, `ANCHOR_BATCH_SECONDS`). */
  batchId: string | null;
  /** The anchored value: 64 hex, no 0x (the EAS attestation's `merkleRoot`, the Stacks contract's `root`). */
  root: string | null;
  /**
   * Leaves of the batch tree: its documents and, last, the log's checkpoint when the batch anchors one; 1 means
   * `root` is the document's own SHA-256.
   */
  batchSize: number | null;
  /** Inclusion proof of the document's `sha256Hash` (`domain/anchoring/merkle.ts`, `verifyMerkleProof`). */
  proof: MerkleProof | null;
}

/**
 * The Merkle proof of a document of the caller's tenant (tenant scoping of `findDocumentInTenant`).
 * @throws AppError NOT_FOUND, FORBIDDEN as `findDocumentInTenant`.
 */
export async function getAnchorProof(em: EntityManager, actor: Actor, id: string): Promise<AnchorProofView> {
  const doc = await findDocumentInTenant(em, actor, id);
  const anchor = await em.findOne(DocumentAnchor, { document: doc.id }, { populate: ['batch'] });
  if (!anchor) return { batchId: null, root: null, batchSize: null, proof: null };
  return {
    batchId: anchor.batch.id,
    root: anchor.batch.root,
    batchSize: anchor.batch.leafCount,
    proof: anchor.proof as MerkleProof,
  };
}
