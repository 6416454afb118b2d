import type { EntityManager } from '@mikro-orm/core';
import type { Log } from '@notary/platform/log';
import type { AnchoringConfig } from '../config';
import { AnchorBatch, AnchorTx, Document, DocumentAnchor } from '../db/entities';
import { AnchorWorker, type WorkerOptions } from '../domain/anchoring/anchor-worker';
import { type CollectOptions, type CutRule, collectBatch } from '../domain/anchoring/batch-cut';
import { type AnchorChain, type ChainEntry, type ChainKind, DEVNET_EVM_NETWORK } from '../ports/chains';
import { type AnchorWorkerLoop, startAnchorWorkerLoop } from './anchor-worker-loop';

/**
 * The anchoring runner: runs the pipeline on the chains the composition root built (the chain registry,
 * `adapters/chains`, through `bootstrap.ts`) and hands over, so that every document uploaded gets its timestamp
 * on each configured chain; it collects pending documents into batches (`triggerCollection`: what the pg-boss
 * collection job calls, a periodic sweep, and a timer set for the instant a waiting partial batch becomes
 * due), and runs one `AnchorWorker` per chain in its loop (`startAnchorWorkerLoop`, the pipeline's sweep:
 * every due row is re-driven).
 *
 * Every collection follows one rule (`CutRule`): a batch is cut when `ANCHOR_BATCH_MAX` documents
 * are pending, or when the uploads have paused for `ANCHOR_BATCH_SECONDS` (its newest document has waited the
 * window), or when its oldest document has waited `BATCH_MAX_WAIT_WINDOWS` windows; a partial batch not yet
 * due stays pending. A burst of uploads is thus cut by count, not split by the clock.
 *
 * - `devnet`: anchors on the in-process Hardhat node (EAS deployed, schema registered) and the Clarity-VM
 *   Stacks node (notary contract deployed), each started on its first use (the chain workers touch a chain only
 *   once they have a transaction to drive: the first anchoring starts the devnets). Both are fresh chains on
 *   every start, so anchoring records left in the database by a previous run (made on a chain that no longer
 *   exists, with nonces that would leave gaps on the new one) are cleared at start and their documents go back
 *   to `pending`: they are anchored again.
 * - `configured`: the chains whose variables are set. The EVM schema is registered when missing
 *   (`ensureSchema`, before any nonce is read); while the node is unreachable this is retried with backoff
 *   (logged) and the EVM worker starts once it succeeds; Stacks starts at once.
 */

/**
 * The longest a document waits for its batch, in batch windows (`CutRule.maxWaitMs`): uploads that never pause
 * for a whole window are still cut this often. A burst of `ANCHOR_BATCH_MAX` documents lasting up to about
 * twice that long takes at most 2 batches.
 */
export const BATCH_MAX_WAIT_WINDOWS = 5;

/** What one `triggerCollection` did. */
export interface CollectionOutcome {
  /** Documents put into batches. */
  batched: number;
  /**
   * Unbatched pending documents left for a later cut (a partial batch not yet due, as far as this collection
   * could see: rows another collection held are not counted); undefined after a failed collection.
   */
  pending: number | undefined;
  /** When the partial batch left pending becomes due (a collection is scheduled then); else undefined. */
  dueAt: Date | undefined;
}

/** Worker tuning per mode (see `WorkerOptions`): the devnets mine at once, real networks take seconds. */
const DEVNET_WORKER = {
  pollMs: 250,
  stuckAfterMs: 30_000,
  backoffMs: 500,
  maxBackoffMs: 10_000,
  maxAttempts: 5,
  leaseMs: 30_000,
} as const;
const NETWORK_WORKER = {
  pollMs: 3_000,
  stuckAfterMs: 10 * 60_000,
  backoffMs: 5_000,
  maxBackoffMs: 5 * 60_000,
  maxAttempts: 8,
  leaseMs: 2 * 60_000,
} as const;

/** The running anchoring (see the module comment). */
export interface AnchoringRunner {
  /** The chains anchored on (EVM first), once their setup is done. */
  readonly chains: readonly AnchorChain[];
  /**
   * Collects now under the cut rule (module comment): full batches of `batchMax` documents while there are
   * that many, then the partial rest if it is due, then wakes the workers. A partial batch not yet due stays
   * pending and a collection is scheduled for when it becomes due. Runs never overlap: a call during a run is
   * served by one more run right after it (a document committed meanwhile is not missed). Never rejects
   * (errors are logged and the collection is retried after the worker's backoff).
   */
  triggerCollection(): Promise<CollectionOutcome>;
  /**
   * Stops the timers and the workers (waiting for their step in progress); the chains stay open for whoever
   * made them to close. A second call waits for the first.
   */
  stop(): Promise<void>;
}

export interface StartAnchoringOptions {
  /** `ANCHORING` (devnet or configured) and the batch and replacement settings. */
  config: Exclude<AnchoringConfig, { mode: 'off' }>;
  /**
   * The chains to anchor on (`startChains` of the registry), EVM first. Their `check` runs here (a
   * contradiction rejects the start) and their `prepare` before their worker starts; they are not closed here.
   */
  chains: readonly ChainEntry[];
  fork: () => EntityManager;
  log: Log;
  /**
   * The transparency log's checkpoint each batch anchors as its last leaf, read in the cut's transaction
   * (`TransparencyLog.anchorableCheckpoint`); without it batches are their documents alone.
   */
  checkpoint?: CollectOptions['checkpoint'];
  /**
   * Seconds between two sweeps (collections under the cut rule). Default `config.batchSeconds`, for when
   * nothing else triggers collections; with the pg-boss collection job wired (bootstrap), the sweep only
   * catches what a lost job left behind, so it can be slower.
   */
  sweepSeconds?: number;
  /** The clock the cut rule compares with the documents' `created_at` (tests; default the system clock). */
  now?: () => Date;
  /** Where the workers count batches confirmed or failed and failed attempts (`/metrics`); absent: not counted. */
  activity?: WorkerOptions['activity'];
}

/**
 * Starts anchoring on `options.chains` per `options.config` (see the module comment). Creates nothing it would
 * have to release on failure: the checks and (devnet) the preparation run before any worker or timer starts.
 * @throws the chains' `ChainConfigError` (an endpoint contradicts the configuration) or, on the devnets, the
 *   error of a failed preparation or of clearing the previous devnet's records.
 */
export async function startAnchoring(options: StartAnchoringOptions): Promise<AnchoringRunner> {
  const { config, fork, log } = options;
  const entries = [...options.chains];

  const chains: AnchorChain[] = [];
  const workers: AnchorWorker[] = [];
  const loops: AnchorWorkerLoop[] = [];
  let stopped = false;
  let setupTimer: NodeJS.Timeout | undefined;
  const tuning = {
    ...(config.mode === 'devnet' ? DEVNET_WORKER : NETWORK_WORKER),
    // ANCHOR_STUCK_SECONDS, ANCHOR_LEASE_SECONDS and ANCHOR_FEE_BUMP_PERCENT when set.
    ...(config.stuckAfterSeconds === undefined ? {} : { stuckAfterMs: config.stuckAfterSeconds * 1000 }),
    ...(config.leaseSeconds === undefined ? {} : { leaseMs: config.leaseSeconds * 1000 }),
    ...(config.feeBumpPercent === undefined ? {} : { feeBumpPercent: config.feeBumpPercent }),
  };

  const startWorker = (chain: AnchorChain, confirmations: number): void => {
    const workerOptions: WorkerOptions = {
      chain,
      fork,
      log,
      confirmations,
      ...tuning,
      ...(options.activity ? { activity: options.activity } : {}),
    };
    const worker = new AnchorWorker(workerOptions);
    chains.push(chain);
    workers.push(worker);
    loops.push(startAnchorWorkerLoop(worker, tuning.pollMs));
    log.info({ chain: chain.kind, network: chain.info().network, confirmations }, 'anchoring');
  };

  const prepareWithBackoff = (entry: ChainEntry, prepare: () => Promise<string>): void => {
    let attempt = 0;
    const setup = async (): Promise<void> => {
      if (stopped) return;
      try {
        const line = await prepare();
        if (stopped) return;
        log.info({ chain: entry.kind }, line);
        startWorker(entry.chain, entry.confirmations);
      } catch (e) {
        attempt += 1;
        const delay = Math.min(tuning.backoffMs * 2 ** (attempt - 1), tuning.maxBackoffMs);
        log.error({ err: e, chain: entry.kind, attempt, retryMs: delay }, 'setup failed; retrying');
        setupTimer = setTimeout(() => void setup(), delay).unref();
      }
    };
    void setup();
  };

  if (config.mode === 'devnet') {
    // A fresh chain: its setup cannot wait for a node coming back, so a failure fails the start. (The
    // service's own devnets have none: they set themselves up at their first use.)
    for (const entry of entries) await entry.prepare?.();
    await forgetPreviousDevnet(fork(), log);
    for (const entry of entries) startWorker(entry.chain, entry.confirmations);
  } else {
    // An endpoint that contradicts the configuration (another kind of API, another network) stops the start.
    for (const entry of entries) await entry.check?.();
    for (const entry of entries) {
      // While a node is unreachable its setup is retried with backoff; the other chains start at once.
      if (entry.prepare) prepareWithBackoff(entry, entry.prepare);
      else startWorker(entry.chain, entry.confirmations);
    }
  }

  // Documents are batched for every configured chain, also while one of them is still being set up.
  const chainKinds = (): ChainKind[] => entries.map((e) => e.kind);

  const now = options.now ?? (() => new Date());
  const cut: CutRule = {
    windowMs: config.batchSeconds * 1000,
    maxWaitMs: BATCH_MAX_WAIT_WINDOWS * config.batchSeconds * 1000,
    now,
  };

  // The collection scheduled for when a waiting partial batch becomes due (an in-process timer: any instance's
  // job, sweep or own timer would cut it too, so nothing depends on this one).
  let dueTimer: NodeJS.Timeout | undefined;
  let dueTimerAt = Number.POSITIVE_INFINITY;
  const collectAt = (dueAt: Date): void => {
    if (stopped || dueAt.getTime() >= dueTimerAt) return;
    if (dueTimer) clearTimeout(dueTimer);
    dueTimerAt = dueAt.getTime();
    dueTimer = setTimeout(
      () => {
        dueTimer = undefined;
        dueTimerAt = Number.POSITIVE_INFINITY;
        void triggerCollection();
      },
      Math.max(0, dueTimerAt - now().getTime()),
    ).unref();
  };

  const collectAll = async (): Promise<CollectionOutcome> => {
    let batched = 0;
    let waiting: { documents: number; dueAt: Date } | undefined;
    let failed = false;
    try {
      for (;;) {
        const r = await collectBatch(fork(), {
          chains: chainKinds(),
          maxBatchSize: config.batchMax,
          cut,
          ...(options.checkpoint ? { checkpoint: options.checkpoint } : {}),
        });
        batched += r.leafCount;
        waiting = r.waiting;
        if (r.batchId) log.info({ batch: r.batchId, documents: r.leafCount }, 'batch collected');
        if (!r.more || stopped) break;
      }
    } catch (e) {
      failed = true;
      log.error({ err: e, retryMs: tuning.backoffMs }, 'batch collection failed; retrying');
    }
    // A failed collection is not left to the next upload or sweep (an hour away on a long window).
    if (failed) collectAt(new Date(now().getTime() + tuning.backoffMs));
    else if (waiting) collectAt(waiting.dueAt);
    if (batched > 0) for (const w of workers) void w.tick();
    return { batched, pending: failed ? undefined : (waiting?.documents ?? 0), dueAt: waiting?.dueAt };
  };

  let running: Promise<CollectionOutcome> | undefined;
  let queued: Promise<CollectionOutcome> | undefined;
  const triggerCollection = (): Promise<CollectionOutcome> => {
    if (!running) {
      running = collectAll().finally(() => {
        running = undefined;
      });
      return running;
    }
    queued ??= running.then(() => {
      queued = undefined;
      return triggerCollection();
    });
    return queued;
  };

  const timer = setInterval(
    () => void triggerCollection(),
    (options.sweepSeconds ?? config.batchSeconds) * 1000,
  ).unref();
  // Documents left pending by a previous run are batched at once.
  void triggerCollection();

  let stopping: Promise<void> | undefined;
  const stop = async (): Promise<void> => {
    stopped = true;
    clearInterval(timer);
    if (dueTimer) clearTimeout(dueTimer);
    if (setupTimer) clearTimeout(setupTimer);
    await Promise.all([running, queued]);
    await Promise.all(loops.map((l) => l.stop()));
  };
  return {
    chains,
    triggerCollection,
    stop: () => {
      stopping ??= stop();
      return stopping;
    },
  };
}

/**
 * Devnet only: forgets the anchoring records of a previous devnet run (batches, transactions, proofs) and puts
 * their documents back to `pending` on both chains, in one transaction. Only batches whose every signed
 * transaction was recorded on a devnet (EVM `hardhat`/31337, Stacks `devnet`) are forgotten: a batch anchored
 * on a real network keeps its rows and its documents keep their status, whatever mode this start guessed.
 * Logs what it cleared and what it kept.
 */
export async function forgetPreviousDevnet(em: EntityManager, log: Log): Promise<void> {
  const { cleared, kept } = await em.transactional(async (tx) => {
    const signed = await tx.find(
      AnchorTx,
      { network: { $ne: null } },
      { fields: ['batch', 'chain', 'network', 'chainId'] },
    );
    const onDevnet = (t: (typeof signed)[number]) =>
      t.chain === 'evm'
        ? t.network === DEVNET_EVM_NETWORK.network && t.chainId === DEVNET_EVM_NETWORK.chainId
        : t.network === 'devnet';
    const realTxs = signed.filter((t) => !onDevnet(t));
    const keep = [...new Set(realTxs.map((t) => t.batch.id))];
    const devnetBatches = await tx.find(AnchorBatch, keep.length ? { id: { $nin: keep } } : {}, {
      fields: ['id'],
    });
    if (devnetBatches.length === 0) return { cleared: 0, kept: keep.length };
    const batchIds = devnetBatches.map((b) => b.id);
    const anchors = await tx.find(DocumentAnchor, { batch: { $in: batchIds } }, { fields: ['document'] });
    const documentIds = anchors.map((a) => a.document.id);
    await tx.nativeDelete(DocumentAnchor, { batch: { $in: batchIds } });
    await tx.nativeDelete(AnchorTx, { batch: { $in: batchIds } });
    await tx.nativeDelete(AnchorBatch, { id: { $in: batchIds } });
    if (documentIds.length > 0) {
      await tx.nativeUpdate(
        Document,
        { id: { $in: documentIds } },
        {
          onchainStatus: 'pending',
          onchainTxHash: null,
          onchainAttestationUid: null,
          onchainAt: null,
          stacksStatus: 'pending',
          stacksTxId: null,
          stacksAnchoredAt: null,
        },
      );
    }
    return { cleared: batchIds.length, kept: keep.length };
  });
  if (cleared > 0) {
    log.info(
      { batches: cleared },
      'devnet: batches of a previous devnet forgotten; their documents re-anchor',
    );
  }
  if (kept > 0) {
    log.info({ batches: kept }, 'devnet: batches anchored on real networks kept as they are');
  }
}
