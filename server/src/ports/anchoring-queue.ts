import type { EntityManager } from '@mikro-orm/core';

/**
 * What the domain needs from the job queue: the anchoring of a new document
 * is requested inside the transaction that writes its row, so that either both exist or neither.
 * Adapter: pg-boss on the service's own database (`jobs/boss.ts`), wired by the composition root.
 */
export interface AnchoringQueue {
  /**
   * Requests the anchoring of what the transaction of `tx` writes (`tx` is the transaction's EntityManager):
   * the request commits or rolls back with it. Requests within one batch window coalesce into one.
   * A queue that is not running takes nothing and resolves at once: the anchoring batcher's own sweep finds
   * every `pending` document later, so none is lost.
   */
  enqueueAnchoring(tx: EntityManager): Promise<void>;
}

/** The queue of a process that runs no anchoring (operator CLI, `ANCHORING=off`): takes nothing. */
export const idleAnchoringQueue: AnchoringQueue = {
  enqueueAnchoring: async () => {},
};
