import type { Logger } from '@notary/platform/log';
import { redactText, secretsOfUrl } from '@notary/platform/redact';
import { AppError, errorMessage } from '@notary/shared';
import pLimit from 'p-limit';
import type { CatalogConfig } from '../config';
import type { Embedder } from '../embeddings/port';
import type { QueryEmbeddingCache } from '../embeddings/query-cache';
import type { IndicatorValue } from '../providers/contract';
import { ProviderError } from '../providers/http-client';
import type { ProviderConnector, ValuesAnswer } from '../providers/port';
import type { VectorIndex } from '../vector-index/port';
import type { CatalogCache, CatalogSnapshot, ProviderInfo } from './catalog-cache';
import { type RankedIndicator, rankIndicators } from './rank';
import type { Attribution, SearchInput, SearchResponse, SearchResult } from './schemas';

export interface SearchDeps {
  embedder: Embedder;
  /** Recently embedded queries of `embedder` (default: every query is embedded). */
  queryEmbeddings?: QueryEmbeddingCache | undefined;
  index: VectorIndex;
  catalog: CatalogCache;
  connectorFor(provider: ProviderInfo): ProviderConnector;
  settings: CatalogConfig['search'];
  /** Where dropped results and a failed query embedding are reported (default: nowhere). */
  log?: Logger;
}

/** Where the time of one search went, ms (`Server-Timing` of `GET /api/search`). */
export interface SearchTiming {
  rank: number;
  /** Municipality resolution at the provider. */
  city: number;
  /** Live value fetches (wall time of the bounded parallel phase). */
  values: number;
  total: number;
}

interface Territory {
  geocode: string;
  name: string | null;
  uf: string | null;
}

/** A provider call's failure as a result tells it: without any piece of the provider's `baseUrl` (its key). */
const describe = (e: unknown, provider: { baseUrl: string }) =>
  redactText(
    e instanceof ProviderError ? `provider ${e.message}` : errorMessage(e),
    secretsOfUrl(provider.baseUrl),
  );

/**
 * The attribution block of a result (spec, Provider registration: publisherName, publisherUrl and license
 * compose it), or undefined when any field is blank: such a result must not leave the catalog.
 */
export function attributionFor(
  provider: ProviderInfo,
  source: { sourceUrl: string; retrievedAt: Date },
): Attribution | undefined {
  const fields = [
    provider.publisherName,
    provider.publisherUrl,
    provider.license,
    provider.slug,
    provider.name,
    source.sourceUrl,
  ];
  if (fields.some((f) => typeof f !== 'string' || f.trim() === '')) return undefined;
  return {
    publisherName: provider.publisherName,
    publisherUrl: provider.publisherUrl,
    license: provider.license,
    provider: { slug: provider.slug, name: provider.name },
    sourceUrl: source.sourceUrl,
    retrievedAt: source.retrievedAt.toISOString(),
  };
}

/**
 * Resolves `city` to a geocode through the providers of the ranked results, in rank order, first match
 * wins (IBGE geocodes are the same at every provider).
 * @returns the territory, or `{error}` when no provider could answer.
 * @throws AppError NOT_FOUND when the providers answered and none knows the name.
 */
async function resolveCity(
  deps: SearchDeps,
  providers: ProviderInfo[],
  city: string,
): Promise<Territory | { error: string }> {
  const errors: string[] = [];
  for (const provider of providers) {
    try {
      const { cities } = await deps
        .connectorFor(provider)
        .resolveCity(city, { timeoutMs: deps.settings.valuesTimeoutMs });
      const best = cities[0];
      if (best) return { geocode: best.geocode, name: best.name, uf: best.uf ?? null };
    } catch (e) {
      errors.push(`${provider.slug}: ${describe(e, provider)}`);
    }
  }
  if (errors.length === 0)
    throw new AppError('NOT_FOUND', `No municipality matches "${city}"`, { fields: ['city'] });
  return { error: `municipality "${city}" could not be resolved: ${errors.join('; ')}` };
}

function toValue(v: IndicatorValue, fallbackUnit: string | null, territory: Territory | undefined) {
  return {
    geocode: v.geocode,
    city: v.city ?? (territory && territory.geocode === v.geocode ? territory.name : null),
    year: v.year,
    value: v.value,
    unit: v.unit ?? fallbackUnit,
  };
}

/**
 * Searches the catalog: ranks indicators (`rankIndicators`), then fetches values live from each result's provider, at
 * most `valuesConcurrency` at a time, each within `valuesTimeoutMs`: the municipality's values
 * (`/indicators/by-geocode/:geocode`) when `city` or `geocode` is given, else the first values of the series
 * (`/indicator-values`). A provider that fails is reported in that result's `error` (never a failed search). Every
 * result carries the attribution block; one that cannot have it is dropped.
 * @throws AppError NOT_FOUND when `city` matches no municipality.
 */
export async function searchIndicators(
  deps: SearchDeps,
  input: SearchInput,
  timing: SearchTiming = { rank: 0, city: 0, values: 0, total: 0 },
): Promise<SearchResponse> {
  const started = performance.now();
  const snapshot: CatalogSnapshot = await deps.catalog.snapshot();
  const ranked: RankedIndicator[] = await rankIndicators(deps, snapshot, input.q, input.limit);
  timing.rank = performance.now() - started;

  let territory: Territory | undefined;
  let territoryError: string | undefined;
  if (input.geocode) {
    territory = { geocode: input.geocode, name: null, uf: null };
  } else if (input.city && ranked.length > 0) {
    const cityStarted = performance.now();
    const providers = [...new Set(ranked.map((r) => r.doc.providerSlug))]
      .map((slug) => snapshot.providers.get(slug))
      .filter((p): p is ProviderInfo => p !== undefined);
    const resolved = await resolveCity(deps, providers, input.city);
    if ('error' in resolved) territoryError = resolved.error;
    else territory = resolved;
    timing.city = performance.now() - cityStarted;
  }

  const valuesStarted = performance.now();
  const limit = pLimit(deps.settings.valuesConcurrency);
  const settled = await Promise.all(
    ranked.map((r) =>
      limit(async (): Promise<SearchResult | undefined> => {
        const provider = snapshot.providers.get(r.doc.providerSlug);
        if (!provider) return undefined;
        const connector = deps.connectorFor(provider);
        const signal = { timeoutMs: deps.settings.valuesTimeoutMs };
        let answer: ValuesAnswer | undefined;
        let error: string | undefined = territoryError;
        let sourceUrl = provider.baseUrl;
        let retrievedAt = new Date();
        if (!error) {
          try {
            answer = territory
              ? await connector.valuesByGeocode(
                  territory.geocode,
                  {
                    indicatorId: r.doc.indicatorId,
                    category: r.doc.categorySlug,
                    year: input.year,
                    limit: deps.settings.valuesPerResult,
                  },
                  signal,
                )
              : await connector.valueSeries(
                  r.doc.indicatorId,
                  { year: input.year, limit: deps.settings.valuesPerResult },
                  signal,
                );
            sourceUrl = answer.sourceUrl;
            retrievedAt = answer.retrievedAt;
          } catch (e) {
            error = describe(e, provider);
            if (e instanceof ProviderError) sourceUrl = e.url;
            retrievedAt = new Date();
          }
        }
        const attribution = attributionFor(provider, { sourceUrl, retrievedAt });
        if (!attribution) {
          deps.log?.warn(`result ${r.doc.providerSlug}/${r.doc.indicatorId} dropped: no attribution`);
          return undefined;
        }
        return {
          indicator: {
            id: r.doc.indicatorId,
            name: r.doc.name,
            category: { slug: r.doc.categorySlug, name: r.doc.categoryName },
            unit: r.doc.unit,
            description: r.doc.description,
            provider: { slug: provider.slug, name: provider.name },
          },
          score: Math.round(r.score * 10_000) / 10_000,
          values: (answer?.values ?? []).map((v) => toValue(v, r.doc.unit, territory)),
          attribution,
          ...(error ? { error } : {}),
        };
      }),
    ),
  );
  timing.values = performance.now() - valuesStarted;
  timing.total = performance.now() - started;
  if (territory && territory.name === null) {
    // A geocode was given: the provider's answer names the municipality.
    const geocode = territory.geocode;
    const named = settled.flatMap((r) => r?.values ?? []).find((v) => v.geocode === geocode && v.city);
    if (named) territory = { ...territory, name: named.city };
  }
  return {
    results: settled.filter((r): r is SearchResult => r !== undefined),
    ...(territory ? { municipality: territory } : {}),
  };
}
