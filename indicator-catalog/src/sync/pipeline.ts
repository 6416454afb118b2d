import type { SqlEntityManager } from '@mikro-orm/sql';
import { errorMessage } from '@notary/shared';
import { Indicator, type ProviderEntity, type SyncProgress } from '../db/entities';
import type { Embedder } from '../embeddings/port';
import type { ProviderConnector } from '../providers/port';
import { pointId } from '../vector-index/point-id';
import type { VectorIndex, VectorPoint } from '../vector-index/port';
import { contentHash, searchText } from './search-text';

/** A definition as the catalog stores it (`catalog_indicator` row without timestamps). */
export interface DefinitionRow {
  id: string;
  indicatorId: string;
  name: string;
  categorySlug: string;
  categoryName: string;
  unit: string | null;
  description: string | null;
  searchText: string;
  contentHash: string;
}

export interface PipelineContext {
  provider: ProviderEntity;
  connector: ProviderConnector;
  embedder: Embedder;
  index: VectorIndex;
  /** Runs `fn` in one database transaction (its EM only: PGlite deadlocks on a second connection). */
  transaction<T>(fn: (em: SqlEntityManager) => Promise<T>): Promise<T>;
  /** Writes the provider's synchronization stamp inside the commit transaction. */
  stamp(
    em: SqlEntityManager,
    outcome: { status: 'ok' | 'partial'; notes: string[]; indicatorCount: number },
  ): Promise<void>;
  /** Mutated in place as the sync advances; `report()` publishes it. */
  progress: SyncProgress;
  report(): void;
  /** Aborted on shutdown: the pipeline stops between steps. */
  signal: AbortSignal;
}

export interface PipelineResult {
  /** `ok`: the whole catalog was read and committed. `partial`: see `notes`. */
  status: 'ok' | 'partial';
  /** Why a sync is partial (walks that stopped early, stale points not removed). */
  notes: string[];
  indicatorCount: number;
  unchanged: number;
}

const UPSERT_CHUNK = 256;
const DB_CHUNK = 500;

const sameRow = (a: DefinitionRow, b: DefinitionRow) =>
  a.indicatorId === b.indicatorId &&
  a.name === b.name &&
  a.categorySlug === b.categorySlug &&
  a.categoryName === b.categoryName &&
  a.unit === b.unit &&
  a.description === b.description &&
  a.searchText === b.searchText &&
  a.contentHash === b.contentHash;

function checkAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new Error('sync interrupted: the catalog is shutting down');
}

/**
 * One synchronization of one provider (spec, What the service does: item 4):
 * 1. crawl: walk the categories, then each category's definitions, page by page (any provider error fails
 *    the sync before anything is written);
 * 2. diff: build each definition's search text and content hash, compare with the index's points of this
 *    provider: only new or changed definitions are embedded;
 * 3. embed in batches of the embedder's size, all staged in memory, then upsert into the vector index (a
 *    failure of the embedder leaves the index untouched);
 * 4. commit the definitions and the provider's stamp (`ctx.stamp`) in one database transaction;
 * 5. cleanup, only after a complete crawl: remove definitions gone from the provider (rows in the commit,
 *    points after it).
 * Searches see a definition through its database row, so points written in step 3 of a sync that fails
 * later stay invisible until a sync commits them, and stale points left by a failed step 5 are never
 * shown. @throws ProviderError, embedder and index errors (the runner records them as `failed`).
 */
export async function runPipeline(ctx: PipelineContext): Promise<PipelineResult> {
  const { provider, connector, embedder, index, progress, signal } = ctx;
  const slug = provider.slug;
  const notes: string[] = [];

  // 1. Crawl.
  progress.phase = 'crawl';
  ctx.report();
  const categories = await connector.categories();
  let complete = categories.complete;
  if (!categories.complete) notes.push(`categories: ${categories.stopReason}`);
  progress.categoriesTotal = categories.items.length;
  ctx.report();
  const rows = new Map<string, DefinitionRow>();
  for (const category of categories.items) {
    checkAborted(signal);
    const walk = await connector.indicators(category.slug);
    if (!walk.complete) {
      complete = false;
      notes.push(`category ${category.slug}: ${walk.stopReason}`);
    }
    for (const d of walk.items) {
      // An id listed under two categories is one indicator: the first listing wins.
      if (rows.has(d.id)) continue;
      const categoryName = category.name;
      const text = searchText({ name: d.name, categoryName }, provider.publisherName);
      rows.set(d.id, {
        id: pointId(slug, d.id),
        indicatorId: d.id,
        name: d.name,
        categorySlug: d.category ?? category.slug,
        categoryName,
        unit: d.unit ?? null,
        description: d.description ?? null,
        searchText: text,
        contentHash: contentHash(embedder.id, text),
      });
    }
    progress.categoriesDone++;
    progress.indicatorsSeen = rows.size;
    ctx.report();
  }

  // 2. Diff against the vector index (the source of truth for what is embedded).
  checkAborted(signal);
  progress.phase = 'diff';
  ctx.report();
  const existingPoints = await index.listProvider(slug);
  const toEmbed = [...rows.values()].filter((r) => existingPoints.get(r.id)?.contentHash !== r.contentHash);
  progress.toEmbed = toEmbed.length;

  // 3. Embed (staged), then upsert.
  progress.phase = 'embed';
  ctx.report();
  const staged: VectorPoint[] = [];
  for (let i = 0; i < toEmbed.length; i += embedder.batchSize) {
    checkAborted(signal);
    const batch = toEmbed.slice(i, i + embedder.batchSize);
    const vectors = await embedder.embed(batch.map((r) => r.searchText));
    batch.forEach((r, j) => {
      staged.push({
        id: r.id,
        vector: vectors[j] as Float32Array,
        payload: { providerSlug: slug, indicatorId: r.indicatorId, contentHash: r.contentHash },
      });
    });
    progress.embedded += batch.length;
    ctx.report();
  }
  progress.phase = 'upsert';
  ctx.report();
  for (let i = 0; i < staged.length; i += UPSERT_CHUNK) {
    checkAborted(signal);
    const chunk = staged.slice(i, i + UPSERT_CHUNK);
    await index.upsert(chunk);
    progress.upserted += chunk.length;
    ctx.report();
  }
  await index.persist();

  // 4. Commit definitions and stamp.
  checkAborted(signal);
  progress.phase = 'commit';
  ctx.report();
  const committed = await ctx.transaction(async (em) => {
    const existing = await loadRows(em, slug);
    const changed = [...rows.values()].filter((r) => {
      const old = existing.get(r.id);
      return !old || !sameRow(old, r);
    });
    const now = new Date();
    for (let i = 0; i < changed.length; i += DB_CHUNK) {
      await em
        .createQueryBuilder(Indicator)
        .insert(changed.slice(i, i + DB_CHUNK).map((r) => ({ ...r, provider: slug, updatedAt: now })))
        .onConflict('id')
        .merge()
        .execute();
    }
    const gone = complete
      ? [...existing.keys()].filter((id) => !rows.has(existing.get(id)?.indicatorId ?? ''))
      : [];
    for (let i = 0; i < gone.length; i += DB_CHUNK) {
      await em.nativeDelete(Indicator, { id: { $in: gone.slice(i, i + DB_CHUNK) } });
    }
    const count = complete ? rows.size : await em.count(Indicator, { provider: slug });
    await ctx.stamp(em, {
      status: notes.length === 0 ? 'ok' : 'partial',
      notes: [...notes],
      indicatorCount: count,
    });
    return { gone: gone.length, count };
  });
  const indicatorCount = committed.count;

  // 5. Cleanup of the index: every point of this provider that is not a current definition.
  let removed = committed.gone;
  if (complete) {
    progress.phase = 'cleanup';
    ctx.report();
    const current = new Set([...rows.values()].map((r) => r.id));
    const stale = [...existingPoints.keys()].filter((id) => !current.has(id));
    try {
      await index.remove(stale);
      await index.persist();
      removed = Math.max(removed, stale.length);
    } catch (e) {
      notes.push(
        `${stale.length} stale points could not be removed from the vector index (${errorMessage(e)}); the next sync retries`,
      );
    }
  }
  progress.removed = removed;
  progress.phase = 'done';
  ctx.report();
  return {
    status: notes.length === 0 ? 'ok' : 'partial',
    notes,
    indicatorCount,
    unchanged: rows.size - toEmbed.length,
  };
}

async function loadRows(em: SqlEntityManager, slug: string): Promise<Map<string, DefinitionRow>> {
  const rows = await em.find(
    Indicator,
    { provider: slug },
    {
      fields: [
        'id',
        'indicatorId',
        'name',
        'categorySlug',
        'categoryName',
        'unit',
        'description',
        'searchText',
        'contentHash',
      ],
    },
  );
  const out = new Map<string, DefinitionRow>();
  for (const r of rows) {
    out.set(r.id, {
      id: r.id,
      indicatorId: r.indicatorId,
      name: r.name,
      categorySlug: r.categorySlug,
      categoryName: r.categoryName,
      unit: r.unit ?? null,
      description: r.description ?? null,
      searchText: r.searchText,
      contentHash: r.contentHash,
    });
  }
  return out;
}
