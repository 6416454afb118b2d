import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { checkpointLeaf } from '@notary/verify/anchored-checkpoint';
import { AnchorBatch, AnchorTx, DocumentAnchor } from '../../db/entities';
import type { ChainKind } from '../../ports/chains';
import type { StoredCheckpoint } from '../log/transparency-log';
import { buildMerkleTree, hashFromHex, type MerkleProof } from './merkle';

/**
 * The batch cut, the first step of anchoring and the same for every chain: `collectBatch` turns pending
 * documents not yet in a batch (oldest first, at most `maxBatchSize`) into one `AnchorBatch` with its Merkle
 * root, one `DocumentAnchor` (leaf index and proof) per document and one `queued` `AnchorTx` per configured
 * chain, in one transaction; `AnchorWorker` (`anchor-worker.ts`) then drives each `AnchorTx` onto its chain.
 * With a `checkpoint` source, the transparency log's latest signed checkpoint at the cut is the tree's last leaf
 * (its value the SHA-256 of the checkpoint text, `checkpointLeaf`): the root anchored on every chain then commits
 * to the log as it stood, at no extra transaction, and two batches' checkpoints can be proven consistent.
 * With a `CutRule` a full batch is cut at once and a partial one only once it is due (`partialBatchDue`), else
 * it stays pending for a later cut: every batch costs one transaction (and its fee) per chain, so a burst of
 * uploads is cut by count into as few batches as its size allows, not split by the clock.
 */

/** A Merkle tree builder (`domain/anchoring/merkle.ts`): leaves in order, its root and one proof per leaf. */
export type MerkleBuilder = (leaves: Uint8Array[]) => { root: Uint8Array; proofs: unknown[] };

/**
 * When a partial batch may be cut. A full batch (`maxBatchSize` unbatched pending documents) is cut at once,
 * whatever its age. A partial one is cut once the uploads have paused for the window (its newest document has
 * waited `windowMs`: a burst ends up in as few batches as its size allows, whatever its upload rate, and a lone
 * document waits exactly the window), or once its oldest document has waited `maxWaitMs` (a steady stream that
 * never pauses is still anchored). Either way its oldest document has waited at least the window, so
 * `maxWaitMs` must be at least `windowMs`.
 */
export interface CutRule {
  /** The batch window (`ANCHOR_BATCH_SECONDS`), in milliseconds. */
  windowMs: number;
  /** The longest a document waits for its batch to fill or the uploads to pause, in milliseconds. */
  maxWaitMs: number;
  /** The clock compared with `document.created_at` (default: the system clock). */
  now?: () => Date;
}

/**
 * `true` when a partial batch whose oldest and newest documents were created at `oldest` and `newest` may be
 * cut at `now` under `rule` (see `CutRule`), else the instant it becomes due.
 */
export function partialBatchDue(oldest: Date, newest: Date, now: Date, rule: CutRule): true | Date {
  const due = Math.min(newest.getTime() + rule.windowMs, oldest.getTime() + rule.maxWaitMs);
  return due <= now.getTime() ? true : new Date(due);
}

/** What `collectBatch` cuts and for which chains. */
export interface CollectOptions {
  chains: ChainKind[];
  /** Default `buildMerkleTree`. */
  buildTree?: MerkleBuilder;
  /** Largest batch (documents per Merkle tree). */
  maxBatchSize: number;
  /** When a partial batch may be cut; without it whatever is pending is cut at once. */
  cut?: CutRule;
  /**
   * The log's latest signed checkpoint, read in the cut's transaction (`latestCheckpoint`): anchored as the
   * batch's last leaf when it has leaves. Without it (or before the log's first leaf) the batch is its documents.
   */
  checkpoint?: (tx: EntityManager) => Promise<StoredCheckpoint | undefined>;
}

/** The outcome of one `collectBatch`. */
export interface CollectResult {
  batchId: string | undefined;
  /** Documents put into the batch (its checkpoint leaf not counted). */
  leafCount: number;
  /** True when more unbatched pending documents remain (collect again right away). */
  more: boolean;
  /**
   * A partial batch left pending by the `CutRule`: its documents (those this collection could lock) and the
   * instant it becomes due. Undefined when nothing was left that way.
   */
  waiting?: { documents: number; dueAt: Date };
}

/** `created_at` as the driver returns it (a `Date` from pg and PGlite; a string is parsed). */
function instant(value: Date | string): Date {
  return value instanceof Date ? value : new Date(value);
}

/** How soon a full batch of which other transactions held some rows is tried again, in milliseconds. */
export const HELD_ROWS_RETRY_MS = 1000;

/**
 * What a collection that left a partial batch of `seen` documents reports. Rows held by another transaction (a
 * row being inserted beside a document, whose foreign key locks it) were skipped, so the partial batch may be a
 * full one: counted without locks, a full batch is due again in `HELD_ROWS_RETRY_MS`, not at the window's end.
 */
async function waitingOf(
  sql: SqlEntityManager,
  seen: number,
  due: Date,
  options: CollectOptions,
): Promise<{ documents: number; dueAt: Date }> {
  const [row]: { n: string | number }[] = await sql.execute(
    `select count(*) as n from document d
      where (d.onchain_status = 'pending' or d.stacks_status = 'pending')
        and not exists (select 1 from document_anchor a where a.document_id = d.id)`,
  );
  const all = Number(row?.n ?? seen);
  if (all < options.maxBatchSize) return { documents: seen, dueAt: due };
  const now = (options.cut?.now ?? (() => new Date()))().getTime();
  return { documents: seen, dueAt: new Date(Math.min(due.getTime(), now + HELD_ROWS_RETRY_MS)) };
}

/**
 * Builds one batch from the oldest pending documents that are in no batch yet: `maxBatchSize` of them when
 * there are that many, else all of them when `options.cut` says the partial batch is due (or there is no
 * rule); otherwise nothing, and `waiting` says when it will be due. Safe to run concurrently (rows are claimed
 * with `FOR UPDATE SKIP LOCKED` and re-read after the claim; a document has at most one `DocumentAnchor`).
 */
export async function collectBatch(em: EntityManager, options: CollectOptions): Promise<CollectResult> {
  if (options.chains.length === 0) return { batchId: undefined, leafCount: 0, more: false };
  return em.transactional(async (tx) => {
    const sql = tx as SqlEntityManager;
    const locked: { id: string; sha256_hash: string; created_at: Date | string }[] = await sql.execute(
      `select d.id, d.sha256_hash, d.created_at from document d
        where (d.onchain_status = 'pending' or d.stacks_status = 'pending')
          and not exists (select 1 from document_anchor a where a.document_id = d.id)
        order by d.created_at, d.id
        limit ?
        for update of d skip locked`,
      [options.maxBatchSize + 1],
    );
    // A row whose lock was released by a concurrent collection's commit was locked here unchanged, past this
    // statement's snapshot of `document_anchor`: read again (a new snapshot) which of them that one batched.
    const taken = new Set<string>();
    if (locked.length > 0) {
      const again: { document_id: string }[] = await sql.execute(
        `select a.document_id from document_anchor a where a.document_id in (${locked.map(() => '?').join(', ')})`,
        locked.map((r) => r.id),
      );
      for (const r of again) taken.add(r.document_id);
    }
    const rows = taken.size === 0 ? locked : locked.filter((r) => !taken.has(r.id));
    const more = rows.length > options.maxBatchSize;
    const docs = rows.slice(0, options.maxBatchSize);
    const first = docs[0];
    const last = docs.at(-1);
    if (!first || !last) return { batchId: undefined, leafCount: 0, more: false };
    if (docs.length < options.maxBatchSize && options.cut) {
      const rule = options.cut;
      const due = partialBatchDue(
        instant(first.created_at),
        instant(last.created_at),
        (rule.now ?? (() => new Date()))(),
        rule,
      );
      // Not due: the rows stay as they are (the locks go with this transaction) for a later cut.
      if (due !== true)
        return {
          batchId: undefined,
          leafCount: 0,
          more: false,
          waiting: await waitingOf(sql, docs.length, due, options),
        };
    }
    const leaves: Uint8Array[] = docs.map((d) => Buffer.from(d.sha256_hash, 'hex'));
    // A plain read of the committed checkpoint rows: no lock is taken on the log, whose sequencer never waits
    // for a cut (nor a cut for it).
    const read = options.checkpoint ? await options.checkpoint(tx) : undefined;
    const checkpoint = read && read.size > 0 ? read : undefined;
    if (checkpoint) leaves.push(hashFromHex(await checkpointLeaf(checkpoint.note)));
    const tree = (options.buildTree ?? buildMerkleTree)(leaves);
    const batch = tx.create(AnchorBatch, {
      id: crypto.randomUUID(),
      leafCount: leaves.length,
      root: Buffer.from(tree.root).toString('hex'),
      ...(checkpoint
        ? {
            checkpointSize: checkpoint.size,
            checkpointRoot: Buffer.from(checkpoint.root),
            checkpointNote: checkpoint.note,
            checkpointProof: (tree.proofs[docs.length] as MerkleProof | undefined) ?? null,
          }
        : {}),
    });
    docs.forEach((d, i) => {
      tx.create(DocumentAnchor, { document: d.id, batch, leafIndex: i, proof: tree.proofs[i] ?? [] });
    });
    const now = new Date();
    for (const chain of options.chains) {
      tx.create(AnchorTx, {
        id: crypto.randomUUID(),
        batch,
        chain,
        state: 'queued',
        nextAttemptAt: now,
      });
    }
    await tx.flush();
    return { batchId: batch.id, leafCount: docs.length, more };
  });
}
