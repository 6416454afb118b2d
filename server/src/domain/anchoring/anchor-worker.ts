import type { EntityManager } from '@mikro-orm/core';
import type { SqlEntityManager } from '@mikro-orm/sql';
import type { Log } from '@notary/platform/log';
import { redactText } from '@notary/platform/redact';
import { errorMessage } from '@notary/shared';
import { AnchorTx, type AnchorTxEntity, Document, DocumentAnchor } from '../../db/entities';
import type { ServiceActivity } from '../../ports/activity';
import {
  type AnchorChain,
  type ChainKind,
  ChainRateLimitedError,
  type FeeParams,
  type TxStatus,
} from '../../ports/chains';

/**
 * The anchor worker: the same code for every chain through the `AnchorChain` port, it drives each `AnchorTx`
 * that the batch cut (`batch-cut.ts`) queued through its states:
 *
 * - `queued` → the nonce is allocated under a per-chain advisory lock (the larger of the chain's pending nonce,
 *   read fresh: the resync, and one past the highest nonce this database has signed), the transaction is signed
 *   and its bytes and hash are COMMITTED (`signed`) before anything is sent;
 * - `signed` → the same bytes are broadcast (again after a crash: idempotent); a nonce-too-low refusal checks
 *   whether this transaction (or one it replaced) was mined, else goes back to `queued` for a fresh nonce;
 * - `broadcast` → polled; included: documents become `registered`; still pending (or dropped by the node)
 *   `stuckAfterMs` after these bytes were first sent: re-signed with the same nonce and both fees at least
 *   `feeBumpPercent` higher (and at least what the node now suggests), the old hash kept in `replacedTxHashes`
 *   (whichever of them is mined counts, once); unknown (dropped) before that: the same bytes are sent again; a
 *   node that answers "underpriced" gets a higher fee at once;
 * - `included` → confirmed once `confirmations` deep. A reorg before that: a receipt that disappears (or goes
 *   back to the mempool) turns the documents back to `pending` and the row back to `signed`, so the same bytes
 *   go out again (a fresh nonce if another transaction took theirs); a receipt that moved to another block
 *   (re-included by the network) updates the documents' registration to the new one;
 * - a provider's rate limit (`ChainRateLimitedError`, broadcast `rate-limited`) pauses this worker for the wait
 *   the provider asked for: nothing is counted against the row and no other call goes out meanwhile;
 * - errors back off exponentially (`nextAttemptAt`); after `maxAttempts` refusals the row is `failed`, logged
 *   and listed by `anchors:status`. Every tick is also the sweep: any row whose `nextAttemptAt` has passed is
 *   claimed (the claim pushes `nextAttemptAt` forward, a lease between several workers).
 *
 * A tick (`AnchorWorker.tick`) is one pass over the due rows; running ticks on a timer is the job of
 * `jobs/anchor-worker-loop.ts`.
 */

/** What an `AnchorWorker` drives (one chain), its database, log and tuning. */
export interface WorkerOptions {
  chain: AnchorChain;
  fork: () => EntityManager;
  /** Where the worker reports (a child naming the module, `anchor`); its lines carry `chain` besides. */
  log: Log;
  /** Confirmation depth (the inclusion block counts as 1). */
  confirmations: number;
  /** Pending (or dropped) this long after its bytes were first sent: replaced with higher fees. */
  stuckAfterMs: number;
  /**
   * The least a replacement raises both fees (EVM maxFeePerGas and maxPriorityFeePerGas, Stacks the fee), in
   * percent; at least 10, what geth, Erigon, Besu, Nethermind and Hardhat require to replace a pending
   * transaction of the same nonce. Default 12.5 (a margin over the rounding of those nodes).
   */
  feeBumpPercent?: number;
  /**
   * Delay between two status polls of an in-flight transaction, in milliseconds; also the pause between two
   * ticks of the job's loop.
   */
  pollMs: number;
  /** First retry delay; doubles per attempt up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
  /** Refusals (rejected, reverted) before a row is `failed`. */
  maxAttempts: number;
  /** How long a claimed row is leased to this worker. */
  leaseMs: number;
  now?: () => Date;
  /** Where batches confirmed or failed and failed attempts are counted (`/metrics`); absent: not counted. */
  activity?: Pick<ServiceActivity, 'anchorBatchConfirmed' | 'anchorBatchFailed' | 'anchorAttemptFailed'>;
  /** Test hook: runs right after the signed bytes are committed, before the broadcast (crash injection). */
  afterSignedCommit?: (row: { id: string; txHash: string }) => Promise<void> | void;
}

/** Arbitrary constants keying the per-chain nonce advisory locks. */
const NONCE_LOCK_KEYS: Record<ChainKind, number> = { evm: 7_310_224_201, stacks: 7_310_224_202 };

/** Default `WorkerOptions.feeBumpPercent`. */
export const DEFAULT_FEE_BUMP_PERCENT = 12.5;
/** The least `feeBumpPercent` accepted: nodes refuse a same-nonce replacement below +10 % on either fee. */
export const MIN_FEE_BUMP_PERCENT = 10;
/** Re-signs with a higher fee in one step after "underpriced" answers, before the row waits for its backoff. */
const MAX_IMMEDIATE_RESIGNS = 3;

/**
 * A replacement's fee: `value` raised by at least `basisPoints` / 100 percent (rounded up, plus one unit so
 * that a zero fee also rises), or `suggested` when that is higher.
 */
function bump(value: bigint, suggested: bigint, basisPoints: bigint): bigint {
  const min = (value * (10_000n + basisPoints) + 9_999n) / 10_000n + 1n;
  return suggested > min ? suggested : min;
}

/**
 * A reason as stored in `anchor_tx.last_error` and written to the log: URLs redacted (`redactText`: keys in
 * the path, query values, credentials). The adapters already redact their own endpoint's secrets; this also
 * covers an unexpected error that names a URL (a driver, a proxy's error page).
 */
function storedReason(reason: string): string {
  return redactText(reason);
}

/**
 * Drives the `AnchorTx` rows of one chain (see the module comment). `tick()` processes every due row once;
 * `stop()` ends the tick in progress after its current row.
 */
export class AnchorWorker {
  private readonly o: WorkerOptions;
  private readonly log: Log;
  private readonly now: () => Date;
  private readonly bumpBasisPoints: bigint;
  private running: Promise<number> | undefined;
  private stopped = false;
  /** Until when (ms, `now()`'s clock) the provider asked us to wait: no row is claimed before. */
  private pausedUntil = 0;

  /** Throws `RangeError` for a `feeBumpPercent` below `MIN_FEE_BUMP_PERCENT`. */
  constructor(options: WorkerOptions) {
    this.o = options;
    this.log = options.log.child({ chain: options.chain.kind });
    this.now = options.now ?? (() => new Date());
    const percent = options.feeBumpPercent ?? DEFAULT_FEE_BUMP_PERCENT;
    if (!(percent >= MIN_FEE_BUMP_PERCENT) || !Number.isFinite(percent)) {
      throw new RangeError(
        `feeBumpPercent ${percent}: a replacement must raise its fees by at least ${MIN_FEE_BUMP_PERCENT} % (nodes refuse less)`,
      );
    }
    this.bumpBasisPoints = BigInt(Math.ceil(percent * 100));
  }

  /** Stops this worker: the tick in progress returns once the row it is driving is done; waits for that. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  /** Processes every due row of this chain once (joins a tick in progress). Resolves with the count. */
  tick(): Promise<number> {
    if (!this.running) {
      this.running = this.runTick().finally(() => {
        this.running = undefined;
      });
    }
    return this.running;
  }

  private async runTick(): Promise<number> {
    let n = 0;
    // Each row at most once per tick: a row due again at once (no lease, no poll delay) waits for the next.
    const seen = new Set<string>();
    try {
      for (;;) {
        if (this.now().getTime() < this.pausedUntil) return n;
        const id = await this.claim();
        if (!id || seen.has(id)) return n;
        seen.add(id);
        n++;
        try {
          await this.step(id);
        } catch (e) {
          if (e instanceof ChainRateLimitedError) await this.rateLimited(id, e.retryAfterMs, e.message);
          // An unexpected error (database, chain adapter bug): keep the row, retry later, visibly.
          else await this.retryLater(id, `unexpected: ${errorMessage(e)}`, e);
        }
        if (this.stopped) return n;
      }
    } catch (e) {
      this.log.error({ err: e }, 'tick failed');
      return n;
    }
  }

  /** Claims the most overdue row of this chain: pushes its `nextAttemptAt` by the lease. */
  private async claim(): Promise<string | undefined> {
    const em = this.o.fork() as SqlEntityManager;
    const now = this.now();
    const rows: { id: string }[] = await em.execute(
      `update anchor_tx set next_attempt_at = ?
        where id = (select id from anchor_tx
                     where chain = ? and state not in ('confirmed', 'failed') and next_attempt_at <= ?
                     order by next_attempt_at limit 1 for update skip locked)
        returning id`,
      [new Date(now.getTime() + this.o.leaseMs), this.o.chain.kind, now],
    );
    return rows[0]?.id;
  }

  private async load(id: string): Promise<{ em: EntityManager; row: AnchorTxEntity }> {
    const em = this.o.fork();
    const row = await em.findOneOrFail(AnchorTx, { id }, { populate: ['batch'] });
    return { em, row };
  }

  private async step(id: string): Promise<void> {
    const { row } = await this.load(id);
    switch (row.state) {
      case 'queued':
        await this.sign(id);
        await this.send(id);
        return;
      case 'signed':
        await this.send(id);
        return;
      case 'broadcast':
      case 'included':
        await this.poll(id);
        return;
      default:
        return;
    }
  }

  /** `queued` → `signed`: nonce under the lock, sign, commit bytes and hash. */
  private async sign(id: string, replace = false): Promise<void> {
    const chain = this.o.chain;
    // Read before the lock (a network call must not hold the database); the lock then takes the larger of it
    // and our own highest signed nonce, so two instances never sign the same nonce for different rows.
    const chainNonce = replace ? 0n : await chain.chainNonce();
    const suggested = await chain.suggestFees();
    const em = this.o.fork();
    let signed: { id: string; txHash: string } | undefined;
    await em.transactional(async (tx) => {
      const sql = tx as SqlEntityManager;
      await sql.execute('select pg_advisory_xact_lock(?)', [NONCE_LOCK_KEYS[chain.kind]]);
      const row = await tx.findOneOrFail(AnchorTx, { id }, { populate: ['batch'] });
      let nonce: bigint;
      let fee: FeeParams = suggested;
      if (replace && row.nonce != null && row.txHash) {
        nonce = BigInt(row.nonce);
        fee = {
          maxFee: bump(BigInt(row.maxFee ?? '0'), suggested.maxFee, this.bumpBasisPoints),
          priorityFee: bump(BigInt(row.priorityFee ?? '0'), suggested.priorityFee, this.bumpBasisPoints),
        };
        const replaced = row.replacedTxHashes ?? [];
        if (!replaced.includes(row.txHash)) row.replacedTxHashes = [...replaced, row.txHash];
      } else {
        const max: { n: string | null }[] = await sql.execute(
          `select max(nonce::numeric)::text as n from anchor_tx
            where chain = ? and nonce is not null and state in ('signed', 'broadcast', 'included', 'confirmed')`,
          [chain.kind],
        );
        const ours = max[0]?.n ? BigInt(max[0].n) + 1n : 0n;
        nonce = ours > chainNonce ? ours : chainNonce;
      }
      const tx2 = await chain.signAnchor(Buffer.from(row.batch.root, 'hex'), nonce, fee);
      const target = chain.info();
      row.state = 'signed';
      row.network = target.network;
      row.chainId = target.chainId;
      row.contract = target.contract;
      row.nonce = tx2.nonce.toString();
      row.txHash = tx2.txHash;
      row.raw = Buffer.from(tx2.raw);
      row.maxFee = tx2.fee.maxFee.toString();
      row.priorityFee = tx2.fee.priorityFee.toString();
      row.broadcastAt = null;
      row.nextAttemptAt = new Date(this.now().getTime() + this.o.leaseMs);
      await tx.flush();
      signed = { id, txHash: tx2.txHash };
    });
    this.log.info({ txHash: signed?.txHash, replacement: replace }, 'signed');
    if (signed && this.o.afterSignedCommit) await this.o.afterSignedCommit(signed);
  }

  /**
   * `signed` → `broadcast`: sends the committed bytes. `resigns`: replacements already signed in this step
   * after "underpriced" answers (bounded by `MAX_IMMEDIATE_RESIGNS`, then the row waits for its backoff).
   */
  private async send(id: string, resigns = 0): Promise<void> {
    const { em, row } = await this.load(id);
    if (row.state !== 'signed' || !row.raw) return;
    const result = await this.o.chain.broadcast(row.raw);
    if (result.ok || result.kind === 'already-known') {
      row.state = 'broadcast';
      // The first send of these bytes: a re-send of the same bytes (dropped, crash) does not restart the
      // clock that decides when they are stuck.
      row.broadcastAt = row.broadcastAt ?? this.now();
      row.nextAttemptAt = new Date(this.now().getTime() + this.o.pollMs);
      await em.flush();
      return;
    }
    const reason = `${result.kind}: ${result.reason}`;
    switch (result.kind) {
      case 'unreachable':
        await this.retryLater(id, reason);
        return;
      case 'rate-limited':
        await this.rateLimited(id, result.retryAfterMs ?? this.backoff(row.attempts + 1), result.reason);
        return;
      case 'underpriced':
        if (resigns >= MAX_IMMEDIATE_RESIGNS) {
          await this.retryLater(id, reason);
          return;
        }
        this.log.info({ txHash: row.txHash, reason }, 're-signing with higher fees');
        await this.sign(id, true);
        await this.send(id, resigns + 1);
        return;
      case 'nonce-too-low': {
        // Mined already (ours, or one we replaced)? Otherwise the nonce went elsewhere: sign afresh.
        if ((await this.findInclusion(em, row)).applied) return;
        await this.requeue(em, row, reason, false);
        return;
      }
      default:
        await this.requeue(em, row, reason, true);
    }
  }

  /** Polls the status of a `broadcast` or `included` row. */
  private async poll(id: string): Promise<void> {
    const { em, row } = await this.load(id);
    const found = await this.findInclusion(em, row);
    if (found.applied) return;
    const status = found.current;
    const next = new Date(this.now().getTime() + this.o.pollMs);
    if (row.state === 'included') {
      // The receipt is gone (its block was reorganized away; the transaction is dropped or back in the
      // mempool): documents back to pending, the same bytes go out again.
      this.log.error({ txHash: row.txHash, status: status.state }, 'no longer included: re-sending');
      await em.transactional(async (tx) => {
        await this.setDocuments(tx, row.batch.id, row.chain, undefined);
        const r = await tx.findOneOrFail(AnchorTx, { id });
        r.state = 'signed';
        r.blockNumber = null;
        r.attestationUid = null;
        r.broadcastAt = null;
        r.lastError = `receipt disappeared (${status.state}): reorganized away, re-sent`;
        r.nextAttemptAt = this.now();
      });
      return;
    }
    if (status.state === 'failed') {
      await this.requeue(em, row, `failed on chain: ${status.reason}`, true);
      return;
    }
    const stuck =
      this.now().getTime() - (row.broadcastAt?.getTime() ?? this.now().getTime()) > this.o.stuckAfterMs;
    if (stuck) {
      // Pending too long (a fee below what blocks now take), or dropped again and again by the node.
      this.log.info({ txHash: row.txHash, status: status.state }, 'stuck: replacing with higher fees');
      await this.sign(id, true);
      await this.send(id);
      return;
    }
    if (status.state === 'unknown') {
      // Dropped by the node (or never arrived): send the same bytes again.
      row.state = 'signed';
      row.nextAttemptAt = this.now();
      await em.flush();
      return;
    }
    row.nextAttemptAt = next;
    await em.flush();
  }

  /**
   * Looks for this row's transaction (or one it replaced) on chain; applies an inclusion. `applied`: the row
   * was updated from an inclusion; else `current` is the status of the row's own transaction (read once).
   */
  private async findInclusion(
    em: EntityManager,
    row: AnchorTxEntity,
  ): Promise<{ applied: true } | { applied: false; current: TxStatus }> {
    let current: TxStatus = { state: 'unknown' };
    const hashes = [row.txHash, ...(row.replacedTxHashes ?? [])].filter((h): h is string => !!h);
    for (const hash of hashes) {
      const status = await this.o.chain.getStatus(hash);
      if (status.state === 'included') {
        await this.applyIncluded(em, row.id, hash, status);
        return { applied: true };
      }
      if (hash === row.txHash) current = status;
    }
    return { applied: false, current };
  }

  private async applyIncluded(
    em: EntityManager,
    id: string,
    txHash: string,
    status: Extract<TxStatus, { state: 'included' }>,
  ): Promise<void> {
    // Counted once committed: a rolled-back transaction settled nothing.
    let settled: { confirmedAfterMs: number } | 'failed' | undefined;
    await em.transactional(async (tx) => {
      const row = await tx.findOneOrFail(AnchorTx, { id }, { populate: ['batch'] });
      if (status.anchoredRoot.toLowerCase() !== `0x${row.batch.root}`) {
        row.state = 'failed';
        row.lastError = `anchored ${status.anchoredRoot}, expected 0x${row.batch.root}`;
        row.batch.status = 'failed';
        this.log.error({ batch: row.batch.id, reason: row.lastError }, 'another root anchored');
        settled = 'failed';
        return;
      }
      const wasIncluded = row.state === 'included' || row.state === 'confirmed';
      // Seen included before, now in another block (or as another of its replacements): a reorg re-included
      // it; the documents take the new registration (the attestation UID depends on the block's time).
      const moved =
        wasIncluded &&
        (row.txHash !== txHash ||
          row.blockNumber !== status.blockNumber.toString() ||
          (row.attestationUid ?? null) !== (status.attestationUid ?? null));
      const before = `${row.txHash} in block ${row.blockNumber}`;
      row.txHash = txHash;
      row.blockNumber = status.blockNumber.toString();
      row.attestationUid = status.attestationUid ?? null;
      row.lastError = null;
      if (!wasIncluded || moved) {
        await this.setDocuments(tx, row.batch.id, row.chain, { txHash, uid: status.attestationUid });
        if (moved) {
          this.log.info(
            { batch: row.batch.id, was: before, txHash, block: status.blockNumber.toString() },
            'batch reorganized',
          );
        } else this.log.info({ batch: row.batch.id, txHash }, 'batch included');
      }
      if (status.confirmations >= this.o.confirmations) {
        row.state = 'confirmed';
        // From the cut (the row is made with its batch) to the confirmation: what a receipt waits for its anchor.
        settled = { confirmedAfterMs: this.now().getTime() - row.createdAt.getTime() };
        await tx.flush();
        const open = await tx.count(AnchorTx, { batch: row.batch.id, state: { $ne: 'confirmed' } });
        if (open === 0) row.batch.status = 'anchored';
      } else {
        row.state = 'included';
        row.nextAttemptAt = new Date(this.now().getTime() + this.o.pollMs);
      }
    });
    const kind = this.o.chain.kind;
    if (settled === 'failed') this.o.activity?.anchorBatchFailed(kind);
    else if (settled)
      this.o.activity?.anchorBatchConfirmed(kind, Math.max(0, settled.confirmedAfterMs) / 1000);
  }

  /** Sets (or, with `undefined`, clears) the chain's registration on every document of the batch. */
  private async setDocuments(
    em: EntityManager,
    batchId: string,
    chain: ChainKind,
    reg: { txHash: string; uid: string | undefined } | undefined,
  ): Promise<void> {
    const anchors = await em.find(DocumentAnchor, { batch: batchId }, { fields: ['document'] });
    const ids = anchors.map((a) => a.document.id);
    const at = reg ? this.now() : null;
    const data =
      chain === 'evm'
        ? {
            onchainStatus: reg ? ('registered' as const) : ('pending' as const),
            onchainTxHash: reg?.txHash ?? null,
            onchainAttestationUid: reg?.uid ?? null,
            onchainAt: at,
          }
        : {
            stacksStatus: reg ? ('registered' as const) : ('pending' as const),
            // The spec builds Stacks links as `<prefix>/0x<txid>`: the document keeps the bare 64-hex txid.
            stacksTxId: reg ? reg.txHash.replace(/^0x/, '') : null,
            stacksAnchoredAt: at,
          };
    await em.nativeUpdate(Document, { id: { $in: ids } }, data);
  }

  /** Back to `queued` (a fresh nonce and signature); `refusal` counts towards `maxAttempts`. */
  private async requeue(em: EntityManager, row: AnchorTxEntity, refusalReason: string, refusal: boolean) {
    const reason = storedReason(refusalReason);
    const attempts = row.attempts + (refusal ? 1 : 0);
    row.attempts = attempts;
    // Outages only back off; refusals are what can fail a batch (an outage must not use up its attempts).
    if (refusal) row.refusals += 1;
    row.lastError = reason;
    row.nonce = null;
    row.raw = null;
    if (row.txHash) row.replacedTxHashes = [...(row.replacedTxHashes ?? []), row.txHash];
    row.txHash = null;
    const failed = refusal && row.refusals >= this.o.maxAttempts;
    if (failed) {
      row.state = 'failed';
      row.batch.status = 'failed';
      this.log.error({ batch: row.batch.id, reason }, 'batch failed');
    } else {
      row.state = 'queued';
      row.nextAttemptAt = new Date(this.now().getTime() + (refusal ? this.backoff(attempts) : 0));
      this.log.error({ batch: row.batch.id, reason }, 'batch refused; re-signing');
    }
    await em.flush();
    if (failed) this.o.activity?.anchorBatchFailed(row.chain);
    else this.o.activity?.anchorAttemptFailed(row.chain);
  }

  /**
   * The provider rate-limited us: the row keeps its state, attempts and refusals (a limit says nothing about
   * the transaction) and is due again after `waitMs`; the worker claims nothing before then.
   */
  private async rateLimited(id: string, waitMs: number, limitReason: string): Promise<void> {
    const reason = storedReason(
      limitReason.startsWith('rate-limited') ? limitReason : `rate-limited: ${limitReason}`,
    );
    const until = this.now().getTime() + Math.max(0, waitMs);
    this.pausedUntil = Math.max(this.pausedUntil, until);
    const { em, row } = await this.load(id);
    row.lastError = reason;
    row.nextAttemptAt = new Date(until);
    await em.flush();
    this.log.info({ reason, pauseSeconds: Math.ceil(waitMs / 1000) }, 'rate-limited; pausing');
  }

  /** Keeps the state, records the error and retries after the backoff. */
  private async retryLater(id: string, retryReason: string, error?: unknown): Promise<void> {
    const reason = storedReason(retryReason);
    const { em, row } = await this.load(id);
    row.attempts += 1;
    row.lastError = reason;
    row.nextAttemptAt = new Date(this.now().getTime() + this.backoff(row.attempts));
    await em.flush();
    this.o.activity?.anchorAttemptFailed(row.chain);
    this.log.error({ err: error, tx: row.id, state: row.state, reason }, 'attempt failed; retrying');
  }

  private backoff(attempts: number): number {
    return Math.min(this.o.backoffMs * 2 ** Math.max(0, attempts - 1), this.o.maxBackoffMs);
  }
}
