import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { type Log, silentLog } from '@notary/platform/log';
import { errorMessage } from '@notary/shared';
import { formatAddCheckpoint, verifyCosignatures } from '@notary/trust/cosignature';
import type { VerifierKey } from '@notary/trust/signed-note';
import type { WitnessClient } from '../../ports/witness-client';
import type { StoredCheckpoint, TransparencyLog } from './transparency-log';

/** A witness of this log: where it answers (its submission prefix) and its cosigner key (type 0x04). */
export interface LogWitnessConfig {
  url: string;
  key: VerifierKey;
}

/** Where the latest checkpoint stands with the witnesses. */
export interface WitnessingState {
  size: number;
  /** Names of the witnesses whose cosignature of that checkpoint is recorded. */
  cosignedBy: string[];
  /** Whether the quorum cosigned it (the checkpoint is final). */
  final: boolean;
}

/**
 * Gets this log's checkpoints cosigned by its witnesses (C2SP tlog-witness): the latest checkpoint is sent to each
 * witness with the consistency proof from the size that witness last cosigned (kept in `log_witness`; a 409 tells
 * the size it holds, and the request is made again once from there), and each cosignature that verifies against
 * the witness's key is kept in `log_cosignature`. A checkpoint is final once `quorum` witnesses cosigned it.
 * Runs in the background (the job queue), never in an upload.
 */
export class LogWitnessing {
  constructor(
    private readonly em: () => EntityManager,
    private readonly log: Pick<TransparencyLog, 'checkpoint' | 'consistency'>,
    private readonly witnesses: readonly LogWitnessConfig[],
    readonly quorum: number,
    private readonly client: WitnessClient,
    private readonly logger: Log = silentLog,
  ) {}

  /**
   * Sends the latest checkpoint to every witness that has not cosigned it yet (all at once; one witness failing
   * does not stop the others).
   * @returns where the checkpoint stands; undefined when the log has no checkpoint yet.
   */
  async cosignLatest(): Promise<WitnessingState | undefined> {
    const checkpoint = await this.log.checkpoint();
    if (!checkpoint) return undefined;
    const have = await this.cosignedBy(checkpoint);
    await Promise.all(
      this.witnesses
        .filter((w) => !have.includes(w.key.name))
        .map((w) =>
          this.submit(w, checkpoint).catch((e: unknown) =>
            this.logger.warn(
              { witness: w.key.name, size: checkpoint.size, err: errorMessage(e) },
              'witness did not cosign the checkpoint',
            ),
          ),
        ),
    );
    const cosignedBy = await this.cosignedBy(checkpoint);
    return { size: checkpoint.size, cosignedBy, final: cosignedBy.length >= this.quorum };
  }

  /**
   * The signed note of `checkpoint` with the cosignature lines recorded for its size appended (C2SP signed-note:
   * extra signature lines), as `/log/checkpoint` serves it and receipts carry it.
   */
  async cosigned(checkpoint: StoredCheckpoint): Promise<string> {
    const rows: { line: string }[] = await (this.em() as SqlEntityManager).execute(
      'select line from log_cosignature where size = ? and root = ? order by witness',
      [checkpoint.size, Buffer.from(checkpoint.root)],
    );
    return checkpoint.note + rows.map((r) => r.line).join('');
  }

  private async cosignedBy(checkpoint: StoredCheckpoint): Promise<string[]> {
    const rows: { witness: string }[] = await (this.em() as SqlEntityManager).execute(
      'select witness from log_cosignature where size = ? and root = ?',
      [checkpoint.size, Buffer.from(checkpoint.root)],
    );
    const configured = new Set(this.witnesses.map((w) => w.key.name));
    return rows.map((r) => r.witness).filter((name) => configured.has(name));
  }

  /** One witness: `add-checkpoint` from the size it holds, again from the size a 409 gives. @throws Error. */
  private async submit(witness: LogWitnessConfig, checkpoint: StoredCheckpoint): Promise<void> {
    const em = this.em() as SqlEntityManager;
    const [row]: { size: string | number }[] = await em.execute(
      'select size from log_witness where witness = ?',
      [witness.key.name],
    );
    let oldSize = row ? Number(row.size) : 0;
    for (let attempt = 0; attempt < 2; attempt++) {
      if (oldSize > checkpoint.size) {
        throw new Error(`the witness holds size ${oldSize}, past this log's ${checkpoint.size}`);
      }
      const proof = await this.log.consistency(oldSize, checkpoint.size);
      const body = formatAddCheckpoint({ oldSize, proof, note: checkpoint.note });
      const answer = await this.client.addCheckpoint(witness.url, body);
      if (
        answer.status === 409 &&
        answer.type === 'text/x.tlog.size' &&
        /^(0|[1-9]\d*)\n$/.test(answer.body)
      ) {
        oldSize = Number(answer.body.trim());
        continue;
      }
      if (answer.status !== 200) {
        throw new Error(`the witness answered ${answer.status}: ${answer.body.slice(0, 200).trim()}`);
      }
      // Only what verifies against the witness's key is kept; other lines of the answer are ignored.
      const [cosignature] = await verifyCosignatures(checkpoint.note + answer.body, [witness.key]);
      if (!cosignature) throw new Error('the answer holds no cosignature of the witness key');
      await em.transactional(async (tx) => {
        const sql = tx as SqlEntityManager;
        await sql.execute(
          `insert into log_cosignature (size, witness, root, line, created_at) values (?, ?, ?, ?, ?)
             on conflict (size, witness) do update set root = excluded.root, line = excluded.line,
             created_at = excluded.created_at`,
          [checkpoint.size, witness.key.name, Buffer.from(checkpoint.root), cosignature.line, new Date()],
        );
        await sql.execute(
          `insert into log_witness (witness, size, updated_at) values (?, ?, ?)
             on conflict (witness) do update set size = greatest(log_witness.size, excluded.size),
             updated_at = excluded.updated_at`,
          [witness.key.name, checkpoint.size, new Date()],
        );
      });
      return;
    }
    throw new Error('the witness kept answering 409');
  }
}
