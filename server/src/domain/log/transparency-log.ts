import { createHmac } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { type Log, silentLog } from '@notary/platform/log';
import { errorMessage } from '@notary/shared';
import { equalBytes } from '@notary/trust/bytes';
import { formatCheckpoint, formatSignedNote, parseSignedNote } from '@notary/trust/signed-note';
import {
  consistencyProof,
  entryBundle,
  inclusionProof,
  TILE_WIDTH,
  type TileName,
  tileWidth,
  treeRoot,
} from '@notary/trust/tlog';
import { encodeLeaf } from '@notary/trust/tlog-leaf';
import type { DocumentEntity } from '../../db/entities';
import type { LogSigner } from '../../ports/log-signer';
import { advanceBound, pendingBound } from './pending-bound';
import { edgeTiles, TileSet, tilesRead } from './tiles';

/** Entries integrated per transaction of the sequencer: a checkpoint at least every this many leaves. */
const INTEGRATE_BATCH = 4096;

/**
 * What the document's transaction uses of the log: its pending entry written in the same transaction, and the
 * sequencer woken once that transaction committed.
 */
export interface LogAppender {
  /** Writes the pending entry of `doc` in the transaction of `tx` (it commits or rolls back with the row). */
  append(tx: EntityManager, doc: DocumentEntity): Promise<void>;
  /** Called after the commit: the sequencer integrates what is pending soon (never awaited by the upload). */
  appended(): void;
}

/** A signed checkpoint as the log keeps it. */
export interface StoredCheckpoint {
  size: number;
  root: Uint8Array;
  /** The signed note (C2SP signed-note of a C2SP tlog-checkpoint), as served at `/log/checkpoint`. */
  note: string;
}

/** A leaf's proof against a checkpoint (RFC 9162, 2.1.3), what a receipt carries. */
export interface LeafProof {
  leafIndex: number;
  /** The leaf's bytes (`@notary/trust/tlog-leaf`). */
  entry: Uint8Array;
  /** Sibling hashes, bottom-up. */
  proof: Uint8Array[];
  checkpoint: StoredCheckpoint;
}

/**
 * The commitment to a tenant a leaf carries: HMAC-SHA256 of the tenant id under a key derived from the service
 * secret, 64 hex. The tenant is never named in the log; the service (holding the secret) can show a tenant which
 * leaves are its own.
 */
export function tenantCommitment(secret: string, tenantId: string): string {
  const key = createHmac('sha256', secret).update('notary/transparency-log-tenant/v1').digest();
  return createHmac('sha256', key).update(tenantId).digest('hex');
}

const bytesOf = (value: unknown): Uint8Array =>
  value instanceof Uint8Array ? new Uint8Array(value) : new Uint8Array(0);

/**
 * The notary's transparency log (docs/anchoring.md, The transparency log): an append-only Merkle tree (RFC 9162
 * hashing) of one leaf per notarization, published as signed checkpoints (C2SP tlog-checkpoint) and tiles (C2SP
 * tlog-tiles). Entries are written pending in their document's transaction; the sequencer (`integrate`) gives them
 * their indexes in one serialized step (an advisory lock across instances, a chain within the process), so the
 * sequence has no gap whatever order concurrent transactions commit in.
 */
export class TransparencyLog implements LogAppender {
  private running: Promise<unknown> = Promise.resolve();
  private scheduled = false;
  private closed = false;
  private readonly listeners: ((checkpoint: StoredCheckpoint) => void)[] = [];

  constructor(
    private readonly em: () => EntityManager,
    private readonly signer: LogSigner,
    private readonly secret: string,
    private readonly log: Log = silentLog,
  ) {}

  /** The log's origin and verifier key (receipts name them). */
  get identity(): { origin: string; verifierKey: string } {
    return { origin: this.signer.origin, verifierKey: this.signer.verifierKey };
  }

  async append(tx: EntityManager, doc: DocumentEntity): Promise<void> {
    const entry = encodeLeaf({
      serial: doc.serialNumber,
      sha256: doc.sha256Hash,
      time: doc.createdAt.toISOString(),
      tenant: tenantCommitment(this.secret, doc.tenant.id),
    });
    // The condition gives the transaction its id before the entry takes its number: what lets the sequencer know
    // when every entry up to a number is final (pending-bound.ts).
    await (tx as SqlEntityManager).execute(
      'insert into log_entry (document_id, entry, created_at) select ?, ?, ? where pg_current_xact_id() is not null',
      [doc.id, Buffer.from(entry), new Date()],
    );
  }

  appended(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.integrate().catch((err: unknown) =>
        this.log.error({ err: errorMessage(err) }, 'transparency log integration failed'),
      );
    });
  }

  /**
   * Integrates every pending entry (in batches of 4,096, each its own transaction and checkpoint) and makes the
   * first checkpoint (size 0) of an empty log.
   * @returns the latest checkpoint.
   */
  integrate(): Promise<StoredCheckpoint> {
    const run = this.running.then(async () => {
      for (;;) {
        const { checkpoint, more } = await this.em().transactional((tx) => this.integrateBatch(tx));
        if (!more) {
          for (const listener of this.listeners) listener(checkpoint);
          return checkpoint;
        }
      }
    });
    this.running = run.catch(() => undefined);
    return run;
  }

  private async integrateBatch(tx: EntityManager): Promise<{ checkpoint: StoredCheckpoint; more: boolean }> {
    const sql = tx as SqlEntityManager;
    await sql.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', ['notary:transparency-log']);
    const head = await latestCheckpoint(tx);
    const size = head?.size ?? 0;
    // From the bound on, not from the table's start: what lies below it was integrated, and reading it again
    // would cost as much as the log is long.
    const bound = await pendingBound(sql, head === undefined);
    const pending: { id: string | number; entry: unknown }[] = await sql.execute(
      'select id, entry from log_entry where id > ? and leaf_index is null order by id limit ?',
      [bound, INTEGRATE_BATCH],
    );
    if (head && pending.length === 0) return { checkpoint: head, more: false };
    const tiles = await loadTiles(tx, edgeTiles(size));
    tiles.appendEntries(
      size,
      pending.map((p) => bytesOf(p.entry)),
    );
    if (pending.length > 0) {
      // One statement for the batch: the n-th selected row (by id) gets index size + n - 1. Rows committed since
      // the select are not in the id list: they wait for the next step.
      const ids = pending.map((p) => p.id);
      await sql.execute(
        `update log_entry e set leaf_index = ? + r.n - 1
           from (select id, row_number() over (order by id) as n from log_entry where id in (${ids.map(() => '?').join(', ')})) r
          where e.id = r.id and e.leaf_index is null`,
        [size, ...ids],
      );
    }
    for (const t of tiles.dirty()) {
      await sql.execute(
        'insert into log_tile (level, idx, hashes) values (?, ?, ?) on conflict (level, idx) do update set hashes = excluded.hashes',
        [t.level, t.idx, Buffer.from(t.hashes)],
      );
    }
    await advanceBound(sql);
    const newSize = size + pending.length;
    const root = treeRoot(newSize, tiles.reader());
    const text = formatCheckpoint({ origin: this.signer.origin, size: newSize, root, extensions: [] });
    const note = formatSignedNote({
      text,
      signatures: [{ name: this.signer.origin, id: this.signer.keyId, signature: this.signer.sign(text) }],
    });
    await sql.execute('insert into log_checkpoint (size, root, note, created_at) values (?, ?, ?, ?)', [
      newSize,
      Buffer.from(root),
      note,
      new Date(),
    ]);
    return { checkpoint: { size: newSize, root, note }, more: pending.length === INTEGRATE_BATCH };
  }

  /**
   * Calls `listener` with the latest checkpoint after every integration (committed; it may be the one before when
   * nothing was pending). Must not throw: the witnesses are asked from here.
   */
  onCheckpoint(listener: (checkpoint: StoredCheckpoint) => void): void {
    this.listeners.push(listener);
  }

  /** Stops waking the sequencer and waits for a running integration (before the database closes). */
  async close(): Promise<void> {
    this.closed = true;
    await this.running;
  }

  /** The latest signed checkpoint, or undefined before the first integration. */
  checkpoint(): Promise<StoredCheckpoint | undefined> {
    return latestCheckpoint(this.em());
  }

  /**
   * The checkpoint an anchoring batch cut in `tx`'s transaction anchors: the latest one as committed (a plain
   * read, no lock: the sequencer never waits for a cut, nor a cut for it), when this log's key signed it. One
   * signed by another key (the log's key was replaced and nothing was integrated since) is not anchored: no
   * verifier given this log's key could check it.
   */
  async anchorableCheckpoint(tx: EntityManager): Promise<StoredCheckpoint | undefined> {
    const head = await latestCheckpoint(tx);
    if (!head) return undefined;
    const ours = parseSignedNote(head.note).signatures.some(
      (s) => s.name === this.signer.origin && equalBytes(s.id, this.signer.keyId),
    );
    return ours ? head : undefined;
  }

  /**
   * The bytes of a tile or entry bundle (C2SP tlog-tiles), or undefined when the log holds no such resource yet:
   * a full tile before it is full, a partial one wider than what the log holds. A partial tile of width W is the
   * first W hashes of its tile (immutable once the log holds them).
   */
  async tile(name: TileName): Promise<Uint8Array | undefined> {
    const em = this.em() as SqlEntityManager;
    const head = await latestCheckpoint(em);
    const width = name.width ?? TILE_WIDTH;
    const level = name.level === 'entries' ? 0 : name.level;
    if (!head || tileWidth(level, name.index, head.size) < width) return undefined;
    if (name.level === 'entries') {
      const first = name.index * TILE_WIDTH;
      const rows: { entry: unknown }[] = await em.execute(
        'select entry from log_entry where leaf_index >= ? and leaf_index < ? order by leaf_index',
        [first, first + width],
      );
      if (rows.length !== width) return undefined;
      return entryBundle(rows.map((r) => bytesOf(r.entry)));
    }
    const tiles = await loadTiles(em, [{ level, idx: name.index }]);
    const hashes = tiles.hashes(level, name.index);
    return hashes.length >= width * 32 ? hashes.subarray(0, width * 32) : undefined;
  }

  /**
   * The proof of `documentId`'s leaf against the latest checkpoint, or undefined when the document has no leaf or
   * its leaf is still pending.
   */
  async proofFor(documentId: string): Promise<LeafProof | undefined> {
    const em = this.em() as SqlEntityManager;
    const [row]: { leaf_index: string | number | null; entry: unknown }[] = await em.execute(
      'select leaf_index, entry from log_entry where document_id = ? and leaf_index is not null',
      [documentId],
    );
    const checkpoint = await latestCheckpoint(em);
    if (!row || row.leaf_index === null || !checkpoint) return undefined;
    const leafIndex = Number(row.leaf_index);
    if (leafIndex >= checkpoint.size) return undefined;
    const tiles = await loadTiles(
      em,
      tilesRead((read) => inclusionProof(leafIndex, checkpoint.size, read)),
    );
    const proof = inclusionProof(leafIndex, checkpoint.size, tiles.reader());
    return { leafIndex, entry: bytesOf(row.entry), proof, checkpoint };
  }

  /**
   * The inclusion proof of leaf `leafIndex` in the tree of `size` leaves the log has held (RFC 9162, 2.1.3): what
   * ties a receipt's leaf to the checkpoint its batch anchored. @throws RangeError past its size or the leaf.
   */
  async inclusionAt(leafIndex: number, size: number): Promise<Uint8Array[]> {
    const em = this.em();
    const head = await latestCheckpoint(em);
    if (!head || size > head.size || leafIndex >= size) {
      throw new RangeError(`the log holds ${head?.size ?? 0} leaves; leaf ${leafIndex} of ${size} asked`);
    }
    const tiles = await loadTiles(
      em,
      tilesRead((read) => inclusionProof(leafIndex, size, read)),
    );
    return inclusionProof(leafIndex, size, tiles.reader());
  }

  /** The consistency proof between two sizes the log has held (RFC 9162, 2.1.4). @throws RangeError past its size. */
  async consistency(oldSize: number, newSize: number): Promise<Uint8Array[]> {
    const em = this.em();
    const head = await latestCheckpoint(em);
    if (!head || newSize > head.size) throw new RangeError(`the log holds ${head?.size ?? 0} leaves`);
    const tiles = await loadTiles(
      em,
      tilesRead((read) => consistencyProof(oldSize, newSize, read)),
    );
    return consistencyProof(oldSize, newSize, tiles.reader());
  }
}

/** The log's latest signed checkpoint as committed (a plain read, no lock), or undefined before the first one. */
export async function latestCheckpoint(em: EntityManager): Promise<StoredCheckpoint | undefined> {
  const [row]: { size: string | number; root: unknown; note: string }[] = await (
    em as SqlEntityManager
  ).execute('select size, root, note from log_checkpoint order by size desc limit 1');
  return row ? { size: Number(row.size), root: bytesOf(row.root), note: row.note } : undefined;
}

async function loadTiles(em: EntityManager, coords: Array<{ level: number; idx: number }>): Promise<TileSet> {
  const tiles = new TileSet();
  for (const { level, idx } of coords) {
    const [row]: { hashes: unknown }[] = await (em as SqlEntityManager).execute(
      'select hashes from log_tile where level = ? and idx = ?',
      [level, idx],
    );
    if (row) tiles.load(level, idx, bytesOf(row.hashes));
  }
  return tiles;
}
