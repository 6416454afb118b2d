import { randomUUID } from 'node:crypto';
import type { SqlEntityManager } from '@mikro-orm/sql';
import { type Logger, silentLogger } from '@notary/platform/log';
import { joinSecrets, redactSecrets, type Secrets, secretsOfUrl } from '@notary/platform/redact';
import { AppError, errorMessage } from '@notary/shared';
import type { Database } from '../db';
import { Provider, type ProviderEntity, type SyncProgress, SyncRun, type SyncStats } from '../db/entities';
import type { Embedder } from '../embeddings/port';
import { ProviderError } from '../providers/http-client';
import type { ProviderConnector } from '../providers/port';
import type { VectorIndex } from '../vector-index/port';
import { runPipeline } from './pipeline';

export type SyncTrigger = 'startup' | 'api' | 'cli' | 'test' | 'bench';

export interface SyncOutcome {
  runId: string;
  providerSlug: string;
  status: 'ok' | 'partial' | 'failed';
  /** Why the sync failed or is partial. */
  error: string | null;
  stats: SyncStats;
}

export interface SyncRunnerDeps {
  db: Database;
  embedder: Embedder;
  index: VectorIndex;
  connectorFor(provider: ProviderEntity): ProviderConnector;
  /** Called after every sync that committed (search caches reload). */
  onCommitted?(slug: string): void;
  /** How often a running sync refreshes its heartbeat and stored progress, ms (default 5000). */
  heartbeatMs?: number;
  /** A `running` provider whose heartbeat is older than this is a dead sync, ms (default 60000). */
  staleAfterMs?: number;
  /** Where failed syncs and unstored progress are reported (default: nowhere). */
  log?: Logger;
  /**
   * Secrets of the catalog's own configured services (the embeddings API and vector index URLs and keys), hidden
   * from stored sync errors and logs besides every piece of the provider's `baseUrl` (`secretsOfUrl`).
   */
  secrets?: Secrets;
}

interface ActiveSync {
  runId: string;
  done: Promise<SyncOutcome>;
  abort: AbortController;
}

const emptyProgress = (): SyncProgress => ({
  phase: 'crawl',
  categoriesDone: 0,
  categoriesTotal: 0,
  indicatorsSeen: 0,
  toEmbed: 0,
  embedded: 0,
  upserted: 0,
  removed: 0,
});

const PROGRESS_WRITE_MS = 1000;
const KEEP_RUNS = 50;

function describe(e: unknown): string {
  if (e instanceof ProviderError) return `provider ${e.message} (GET ${e.url})`;
  return errorMessage(e);
}

/**
 * Runs provider syncs: at most one per provider across every catalog instance (claimed on the provider row: `running`
 * with a fresh heartbeat), progress published to listeners at once and to the row every second, each run recorded in
 * `catalog_sync_run`, the stamp written by the pipeline's commit. A failure leaves the provider `failed` with the
 * previous index untouched, so searches keep answering from it.
 */
export class SyncRunner {
  private readonly active = new Map<string, ActiveSync>();
  private readonly listeners = new Set<(slug: string, progress: SyncProgress) => void>();
  private readonly heartbeatMs: number;
  private readonly staleAfterMs: number;
  private readonly log: Logger;

  constructor(private readonly deps: SyncRunnerDeps) {
    this.heartbeatMs = deps.heartbeatMs ?? 5000;
    this.staleAfterMs = deps.staleAfterMs ?? 60_000;
    this.log = deps.log ?? silentLogger;
  }

  /** Subscribes to progress of every sync of this instance; returns the unsubscribe function. */
  onProgress(listener: (slug: string, progress: SyncProgress) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The running sync of `slug` on this instance, if any. */
  current(slug: string): { runId: string; done: Promise<SyncOutcome> } | undefined {
    return this.active.get(slug);
  }

  /**
   * Claims `slug` and starts a sync in the background.
   * @returns the run id and a promise of its outcome (never rejects).
   * @throws AppError NOT_FOUND (no such provider), CONFLICT (a sync of it is running here or elsewhere).
   */
  async start(slug: string, trigger: SyncTrigger): Promise<{ runId: string; done: Promise<SyncOutcome> }> {
    if (this.active.has(slug)) throw new AppError('CONFLICT', `A sync of ${slug} is already running`);
    const em = this.deps.db.fork();
    const progress = emptyProgress();
    const now = new Date();
    const claimed = await em.nativeUpdate(
      Provider,
      {
        slug,
        $or: [
          { syncStatus: { $ne: 'running' } },
          { syncHeartbeatAt: null },
          { syncHeartbeatAt: { $lt: new Date(now.getTime() - this.staleAfterMs) } },
        ],
      },
      { syncStatus: 'running', syncProgress: progress, syncHeartbeatAt: now },
    );
    if (claimed === 0) {
      if (!(await em.findOne(Provider, { slug }))) throw new AppError('NOT_FOUND', `No provider ${slug}`);
      throw new AppError('CONFLICT', `A sync of ${slug} is already running`);
    }
    const provider = await em.findOneOrFail(Provider, { slug }, { refresh: true });
    const runId = randomUUID();
    em.create(SyncRun, { id: runId, provider: slug, trigger, startedAt: now, status: 'running' });
    await em.flush();
    const abort = new AbortController();
    const done = this.execute(provider, runId, progress, abort.signal);
    this.active.set(slug, { runId, done, abort });
    void done.finally(() => this.active.delete(slug));
    return { runId, done };
  }

  /** `start` and wait for the outcome. */
  async run(slug: string, trigger: SyncTrigger): Promise<SyncOutcome> {
    return (await this.start(slug, trigger)).done;
  }

  private async execute(
    provider: ProviderEntity,
    runId: string,
    progress: SyncProgress,
    signal: AbortSignal,
  ): Promise<SyncOutcome> {
    const slug = provider.slug;
    // A provider's baseUrl may carry its key (path, query, host): stored errors and logs are told without it. Only
    // the configured secrets: the rest of the URL (the page that failed, `?page=2`) is what the operator needs.
    const secrets = joinSecrets(secretsOfUrl(provider.baseUrl), this.deps.secrets);
    const started = performance.now();
    let inTransaction = false;
    let lastWrite = 0;
    let writing: Promise<unknown> = Promise.resolve();
    const writeProgress = () => {
      if (inTransaction) return;
      lastWrite = performance.now();
      const snapshot = { ...progress };
      writing = writing
        .then(() =>
          this.deps.db
            .fork()
            .nativeUpdate(
              Provider,
              { slug, syncStatus: 'running' },
              { syncProgress: snapshot, syncHeartbeatAt: new Date() },
            ),
        )
        .catch((e: unknown) => this.log.warn({ err: e }, `sync ${slug}: progress not stored`));
    };
    const heartbeat = setInterval(writeProgress, this.heartbeatMs);
    heartbeat.unref();
    const report = () => {
      for (const listener of this.listeners) listener(slug, { ...progress });
      if (performance.now() - lastWrite >= PROGRESS_WRITE_MS) writeProgress();
    };
    const stats = (unchanged: number): SyncStats => ({
      ...progress,
      unchanged,
      durationMs: Math.round(performance.now() - started),
    });
    try {
      const result = await runPipeline({
        provider,
        connector: this.deps.connectorFor(provider),
        embedder: this.deps.embedder,
        index: this.deps.index,
        progress,
        report,
        signal,
        transaction: async (fn) => {
          await writing;
          inTransaction = true;
          try {
            return await this.deps.db.fork().transactional((em) => fn(em as SqlEntityManager));
          } finally {
            inTransaction = false;
          }
        },
        stamp: async (em, outcome) => {
          const row = await em.findOneOrFail(Provider, { slug }, { refresh: true });
          const now = new Date();
          // The status stays `running` until `finish` writes it with the run's stats in one transaction: the
          // index cleanup still follows (and may make the sync partial), and a reader who sees the provider
          // done must also see its run's outcome.
          row.lastSyncAt = now;
          row.lastSuccessAt = now;
          row.indicatorCount = outcome.indicatorCount;
          row.embedderId = this.deps.embedder.id;
          row.catalogVersion += 1;
          await em.flush();
        },
      });
      clearInterval(heartbeat);
      await writing;
      const error = result.notes.length ? redactSecrets(result.notes.join('; '), secrets) : null;
      const outcome: SyncOutcome = {
        runId,
        providerSlug: slug,
        status: result.status,
        error,
        stats: stats(result.unchanged),
      };
      await this.finish(outcome, { syncStatus: result.status, lastError: error });
      this.deps.onCommitted?.(slug);
      return outcome;
    } catch (e) {
      clearInterval(heartbeat);
      await writing;
      const error = redactSecrets(describe(e), secrets);
      this.log.warn(`sync ${slug} failed: ${error}`);
      const outcome: SyncOutcome = { runId, providerSlug: slug, status: 'failed', error, stats: stats(0) };
      await this.finish(outcome, { syncStatus: 'failed', lastError: error, lastSyncAt: new Date() }).catch(
        (f: unknown) => this.log.error({ err: f }, `sync ${slug}: failure not recorded`),
      );
      return outcome;
    }
  }

  private async finish(
    outcome: SyncOutcome,
    stamp: { syncStatus: SyncOutcome['status']; lastError: string | null; lastSyncAt?: Date },
  ): Promise<void> {
    const em = this.deps.db.fork();
    // One transaction: whoever sees the provider no longer running also sees its run's outcome and stats.
    await em.transactional(async (tx) => {
      await tx.nativeUpdate(
        SyncRun,
        { id: outcome.runId },
        { finishedAt: new Date(), status: outcome.status, stats: outcome.stats, error: outcome.error },
      );
      await tx.nativeUpdate(
        Provider,
        { slug: outcome.providerSlug },
        { ...stamp, syncProgress: null, syncHeartbeatAt: null },
      );
    });
    // The history keeps the last KEEP_RUNS runs of each provider.
    const old = await em.find(
      SyncRun,
      { provider: outcome.providerSlug },
      { orderBy: { startedAt: 'desc' }, offset: KEEP_RUNS, fields: ['id'] },
    );
    if (old.length) await em.nativeDelete(SyncRun, { id: { $in: old.map((r) => r.id) } });
  }

  /**
   * At startup: a provider left `running` with a stale heartbeat belongs to a catalog that stopped during
   * its sync; it becomes `failed` (its index is the one of its last commit).
   */
  async recoverInterrupted(): Promise<number> {
    const em = this.deps.db.fork();
    const staleBefore = new Date(Date.now() - this.staleAfterMs);
    const stale = await em.find(Provider, {
      syncStatus: 'running',
      $or: [{ syncHeartbeatAt: null }, { syncHeartbeatAt: { $lt: staleBefore } }],
    });
    for (const p of stale) {
      p.syncStatus = 'failed';
      p.lastError = 'interrupted: the catalog stopped during this sync';
      p.lastSyncAt = new Date();
      p.syncProgress = null;
      p.syncHeartbeatAt = null;
    }
    await em.flush();
    if (stale.length) {
      await em.nativeUpdate(
        SyncRun,
        { provider: { $in: stale.map((p) => p.slug) }, status: 'running' },
        {
          status: 'failed',
          finishedAt: new Date(),
          error: 'interrupted: the catalog stopped during this sync',
        },
      );
    }
    return stale.length;
  }

  /** Stops every running sync of this instance (they end `failed`) and waits for them. */
  async close(): Promise<void> {
    const running = [...this.active.values()];
    for (const a of running) a.abort.abort();
    await Promise.all(running.map((a) => a.done));
  }
}
