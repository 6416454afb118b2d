import { createHash } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { equalBytes } from '@notary/trust/bytes';
import { cosignatureMessage, parseAddCheckpoint, timestampedSignature } from '@notary/trust/cosignature';
import {
  type Checkpoint,
  parseCheckpoint,
  parseSignedNote,
  signatureLine,
  type VerifierKey,
  verifySignedNote,
} from '@notary/trust/signed-note';
import { EMPTY_ROOT, verifyConsistency } from '@notary/trust/tlog';
import type { Cosigner } from '../../ports/cosigner';

/**
 * The answer to an `add-checkpoint` request (C2SP tlog-witness): 200 with the cosignature line, 409 with the size
 * this witness holds for the log, or a refusal with its status (400 malformed or old size past the checkpoint, 403
 * not signed by the log's key, 404 unknown log, 422 inconsistent) and a reason in English.
 */
export type AddCheckpointAnswer =
  | { status: 200; cosignature: string }
  | { status: 409; size: number }
  | { status: 400 | 403 | 404 | 422; reason: string };

const bytesOf = (value: unknown): Uint8Array =>
  value instanceof Uint8Array ? new Uint8Array(value) : new Uint8Array(0);

/** Hex SHA-256 of a log's origin: how the monitoring path names it (C2SP tlog-witness, Monitor Retrieval). */
export function originHash(origin: string): string {
  return createHash('sha256').update(origin, 'utf8').digest('hex');
}

/**
 * This service as a witness of other notaries' logs (C2SP tlog-witness, tlog-cosignature): it cosigns a
 * checkpoint only when it is signed by the key configured for its origin and consistent with the latest one it
 * cosigned for that origin, which it keeps in `witness_log`. The check of the old size and the record of the new
 * checkpoint happen in one transaction under a lock per origin, so two concurrent requests can never roll the
 * witness back.
 */
export class Witness {
  constructor(
    private readonly em: () => EntityManager,
    private readonly cosigner: Cosigner,
    /** The logs witnessed: each log's verifier key, whose name is the log's origin. */
    private readonly logs: readonly VerifierKey[],
    /** Now, in milliseconds since the epoch (tests move it). */
    private readonly now: () => number = Date.now,
  ) {}

  /** The witness's verifier key (type 0x04), as the logs that use it configure it. */
  get verifierKey(): string {
    return this.cosigner.verifierKey;
  }

  /**
   * Handles an `add-checkpoint` body (C2SP tlog-witness): parses it, verifies the log's signature, compares the
   * old size with the recorded one, verifies the consistency proof (RFC 9162, 2.1.4.2), then records the
   * checkpoint and returns its cosignature/v1 line (timestamp: now, in seconds).
   */
  async addCheckpoint(body: string): Promise<AddCheckpointAnswer> {
    let request: ReturnType<typeof parseAddCheckpoint>;
    let checkpoint: Checkpoint;
    try {
      request = parseAddCheckpoint(body);
      checkpoint = parseCheckpoint(parseSignedNote(request.note).text);
    } catch (e) {
      return { status: 400, reason: e instanceof Error ? e.message : 'malformed request' };
    }
    const key = this.logs.find((k) => k.name === checkpoint.origin);
    if (!key) return { status: 404, reason: `unknown log ${checkpoint.origin}` };
    try {
      await verifySignedNote(request.note, [key]);
    } catch (e) {
      return { status: 403, reason: e instanceof Error ? e.message : 'bad signature' };
    }
    if (request.oldSize > checkpoint.size) {
      return { status: 400, reason: `old size ${request.oldSize} past the checkpoint's ${checkpoint.size}` };
    }
    if (checkpoint.size === 0 && !equalBytes(checkpoint.root, EMPTY_ROOT)) {
      return { status: 422, reason: 'a checkpoint of size 0 has the root of the empty tree' };
    }
    return this.em().transactional(async (tx) => {
      const sql = tx as SqlEntityManager;
      await sql.execute('select pg_advisory_xact_lock(hashtextextended(?, 0))', [
        `notary:witness:${checkpoint.origin}`,
      ]);
      const [row]: { size: string | number; root: unknown }[] = await sql.execute(
        'select size, root from witness_log where origin = ?',
        [checkpoint.origin],
      );
      const known = row ? { size: Number(row.size), root: bytesOf(row.root) } : { size: 0, root: EMPTY_ROOT };
      if (request.oldSize !== known.size) return { status: 409 as const, size: known.size };
      const refusal = consistencyRefusal(known, checkpoint, request.proof);
      if (refusal) return { status: 422 as const, reason: refusal };
      const cosignature = this.cosign(parseSignedNote(request.note).text);
      await sql.execute(
        `insert into witness_log (origin, size, root, note, updated_at) values (?, ?, ?, ?, ?)
           on conflict (origin) do update set size = excluded.size, root = excluded.root, note = excluded.note,
           updated_at = excluded.updated_at`,
        [
          checkpoint.origin,
          checkpoint.size,
          Buffer.from(checkpoint.root),
          request.note + cosignature,
          new Date(),
        ],
      );
      return { status: 200 as const, cosignature };
    });
  }

  /**
   * The latest checkpoint cosigned for the log whose origin hashes (hex SHA-256) to `hash`, with the log's
   * signatures and this witness's cosignature (C2SP tlog-witness, Monitor Retrieval), or undefined.
   */
  async latest(hash: string): Promise<string | undefined> {
    const key = this.logs.find((k) => originHash(k.name) === hash);
    if (!key) return undefined;
    const [row]: { note: string }[] = await (this.em() as SqlEntityManager).execute(
      'select note from witness_log where origin = ?',
      [key.name],
    );
    return row?.note;
  }

  private cosign(text: string): string {
    const timestamp = Math.floor(this.now() / 1000);
    const signature = this.cosigner.sign(cosignatureMessage(text, timestamp));
    return signatureLine({
      name: this.cosigner.name,
      id: this.cosigner.keyId,
      signature: timestampedSignature(timestamp, signature),
    });
  }
}

/** Why `next` is not consistent with `known` given `proof` (C2SP tlog-witness rules), or undefined when it is. */
function consistencyRefusal(
  known: { size: number; root: Uint8Array },
  next: Checkpoint,
  proof: readonly Uint8Array[],
): string | undefined {
  // The same function covers the three cases the protocol names: from 0 (no proof), same size (same root), larger.
  if (verifyConsistency(known.size, next.size, proof, known.root, next.root)) return undefined;
  return known.size === next.size
    ? `a different tree of size ${next.size} than the one cosigned`
    : `not consistent with the tree of size ${known.size} cosigned`;
}
