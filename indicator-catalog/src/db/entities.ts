import { defineEntity, type InferEntity, p } from '@mikro-orm/core';

/**
 * Catalog entities (MikroORM 7 `defineEntity`). Tables are prefixed `catalog_` so that the catalog can share
 * a PostgreSQL database with other services without clashing.
 */

/** Sync status values of a provider (docs/catalog.md, Synchronization). */
export const SYNC_STATUSES = ['never', 'running', 'ok', 'partial', 'failed'] as const;
export type SyncStatus = (typeof SYNC_STATUSES)[number];

/** Progress of a running sync; kept on the provider row so that every instance can show it. */
export interface SyncProgress {
  phase: 'crawl' | 'diff' | 'embed' | 'upsert' | 'commit' | 'cleanup' | 'done';
  categoriesDone: number;
  categoriesTotal: number;
  /** Definitions read from the provider so far. */
  indicatorsSeen: number;
  /** New or changed definitions that need an embedding (known after the crawl). */
  toEmbed: number;
  embedded: number;
  upserted: number;
  removed: number;
}

/** Outcome figures of a finished sync run. */
export interface SyncStats extends SyncProgress {
  /** Definitions whose search text did not change (not re-embedded). */
  unchanged: number;
  durationMs: number;
}

/**
 * A registered provider (spec, Provider registration) and its synchronization stamp (spec,
 * Synchronization stamp: `lastSyncAt`, status, indicator count).
 */
export const Provider = defineEntity({
  name: 'Provider',
  tableName: 'catalog_provider',
  properties: {
    slug: p.string().length(64).primary(),
    name: p.string().length(200),
    kind: p.string().length(64),
    baseUrl: p.string().length(2048),
    publisherName: p.string().length(300),
    publisherUrl: p.string().length(2048),
    license: p.string().length(200),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
    syncStatus: p.enum(SYNC_STATUSES).default('never'),
    /** End of the last finished sync attempt, whatever its outcome. */
    lastSyncAt: p.datetime().nullable(),
    /** End of the last sync that committed (`ok` or `partial`). */
    lastSuccessAt: p.datetime().nullable(),
    /** Definitions of this provider in the catalog (as of the last commit). */
    indicatorCount: p.integer().default(0),
    lastError: p.text().nullable(),
    /** Progress of the running sync, null otherwise. */
    syncProgress: p.json<SyncProgress>().nullable(),
    /** Refreshed while a sync runs; a `running` status with an old heartbeat is a dead sync. */
    syncHeartbeatAt: p.datetime().nullable(),
    /** Embedder of the last committed sync: a different configured embedder means re-embed everything. */
    embedderId: p.string().length(200).nullable(),
    /** Bumped on every commit that changes the catalog; search caches compare it. */
    catalogVersion: p.integer().default(0),
  },
});
export type ProviderEntity = InferEntity<typeof Provider>;

/**
 * One indicator definition as the catalog knows it (metadata only: values are always fetched live). `id` is
 * the vector index point id (UUID v5 of `providerSlug:indicatorId`).
 */
export const Indicator = defineEntity({
  name: 'Indicator',
  tableName: 'catalog_indicator',
  properties: {
    id: p.uuid().primary(),
    provider: () => p.manyToOne(Provider).deleteRule('cascade'),
    indicatorId: p.string().length(200),
    name: p.text(),
    categorySlug: p.string().length(200),
    categoryName: p.text(),
    unit: p.text().nullable(),
    description: p.text().nullable(),
    /**
     * The text that was embedded (spec, What the service does: synchronization step 2, name, category,
     * publisher).
     */
    searchText: p.text(),
    /** SHA-256 hex of `searchText` and the embedder id. */
    contentHash: p.string().length(64),
    updatedAt: p.datetime(),
  },
  uniques: [{ properties: ['provider', 'indicatorId'] }],
});
export type IndicatorEntity = InferEntity<typeof Indicator>;

/** History of sync runs (what `GET /api/providers/{slug}/sync` lists as `recentRuns`). */
export const SyncRun = defineEntity({
  name: 'SyncRun',
  tableName: 'catalog_sync_run',
  properties: {
    id: p.uuid().primary(),
    provider: () => p.manyToOne(Provider).deleteRule('cascade'),
    trigger: p.string().length(32),
    startedAt: p.datetime(),
    finishedAt: p.datetime().nullable(),
    status: p.enum(SYNC_STATUSES),
    stats: p.json<SyncStats>().nullable(),
    error: p.text().nullable(),
  },
  indexes: [{ properties: ['provider', 'startedAt'] }],
});
export type SyncRunEntity = InferEntity<typeof SyncRun>;

export const entities = [Provider, Indicator, SyncRun];
