import type { Database } from '../db';
import { Indicator, Provider } from '../db/entities';
import { compact } from '../text/portuguese';
import { LexicalIndex } from './lexical';

/** A definition as the search sees it (from `catalog_indicator`). */
export interface IndicatorDoc {
  pointId: string;
  providerSlug: string;
  indicatorId: string;
  name: string;
  categorySlug: string;
  categoryName: string;
  unit: string | null;
  description: string | null;
}

/** A provider as the search sees it: connector settings and the attribution fields. */
export interface ProviderInfo {
  slug: string;
  name: string;
  kind: string;
  baseUrl: string;
  publisherName: string;
  publisherUrl: string;
  license: string;
  /** Embedder of its last committed sync; the semantic leg skips providers embedded by another one. */
  embedderId: string | null;
}

/** An immutable view of the committed catalog, with its lexical index and exact-match tables. */
export interface CatalogSnapshot {
  version: string;
  providers: ReadonlyMap<string, ProviderInfo>;
  docs: ReadonlyMap<string, IndicatorDoc>;
  lexical: LexicalIndex;
  /** `compact(indicatorId)` -> point ids (codes are unique per provider, not across providers). */
  byCode: ReadonlyMap<string, string[]>;
  /** `compact(name)` -> point ids. */
  byName: ReadonlyMap<string, string[]>;
}

const push = (map: Map<string, string[]>, key: string, id: string) => {
  if (!key) return;
  const list = map.get(key);
  if (list) list.push(id);
  else map.set(key, [id]);
};

/**
 * The committed catalog, cached in memory for the search. Another instance's commit is noticed within
 * `checkEveryMs` (the providers' `catalogVersion` is compared); this instance's own commits call
 * `invalidate()`.
 */
export class CatalogCache {
  private current: CatalogSnapshot | undefined;
  private checkedAt = 0;
  private loading: Promise<CatalogSnapshot> | undefined;

  constructor(
    private readonly db: Database,
    private readonly checkEveryMs = 2000,
  ) {}

  /** Forces a version check on the next `snapshot()`. */
  invalidate(): void {
    this.checkedAt = 0;
  }

  /** The current snapshot, rebuilt when a provider's catalog changed. */
  async snapshot(): Promise<CatalogSnapshot> {
    if (this.current && performance.now() - this.checkedAt < this.checkEveryMs) return this.current;
    this.loading ??= this.refresh().finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  private async refresh(): Promise<CatalogSnapshot> {
    const em = this.db.fork();
    const providers = await em.find(Provider, {}, { orderBy: { slug: 'asc' } });
    const version = providers.map((p) => `${p.slug}:${p.catalogVersion}`).join(',');
    this.checkedAt = performance.now();
    if (this.current && this.current.version === version) return this.current;
    const rows = await em.find(
      Indicator,
      {},
      {
        fields: [
          'id',
          'provider',
          'indicatorId',
          'name',
          'categorySlug',
          'categoryName',
          'unit',
          'description',
        ],
      },
    );
    const docs = new Map<string, IndicatorDoc>();
    const byCode = new Map<string, string[]>();
    const byName = new Map<string, string[]>();
    for (const r of rows) {
      const doc: IndicatorDoc = {
        pointId: r.id,
        providerSlug: r.provider.slug,
        indicatorId: r.indicatorId,
        name: r.name,
        categorySlug: r.categorySlug,
        categoryName: r.categoryName,
        unit: r.unit ?? null,
        description: r.description ?? null,
      };
      docs.set(doc.pointId, doc);
      push(byCode, compact(doc.indicatorId), doc.pointId);
      push(byName, compact(doc.name), doc.pointId);
    }
    const lexical = new LexicalIndex(
      [...docs.values()].map((d) => ({
        id: d.pointId,
        code: d.indicatorId,
        name: d.name,
        category: `${d.categoryName} ${d.categorySlug}`,
        description: d.description ?? '',
        unit: d.unit ?? '',
      })),
    );
    this.current = {
      version,
      providers: new Map(
        providers.map((p) => [
          p.slug,
          {
            slug: p.slug,
            name: p.name,
            kind: p.kind,
            baseUrl: p.baseUrl,
            publisherName: p.publisherName,
            publisherUrl: p.publisherUrl,
            license: p.license,
            embedderId: p.embedderId ?? null,
          },
        ]),
      ),
      docs,
      lexical,
      byCode,
      byName,
    };
    return this.current;
  }
}
