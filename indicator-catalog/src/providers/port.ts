import type { Category, City, IndicatorDefinition, IndicatorValue } from './contract';
import type { ProviderEgress } from './egress';
import type { WalkResult } from './paginate';

export interface ConnectorOptions {
  /** Per request attempt, ms. */
  timeoutMs: number;
  /** Retries of sync calls (value calls during a search are not retried: the search has a deadline). */
  retries: number;
  /** Most pages one walk fetches. */
  maxPages: number;
  /** The address-checking way out every provider request takes (SSRF guard, body cap). */
  egress: ProviderEgress;
}

export interface ValuesAnswer {
  values: IndicatorValue[];
  /** The exact URL the values came from (attribution). */
  sourceUrl: string;
  retrievedAt: Date;
  /** The provider's own time for this call, ms. */
  elapsedMs: number;
}

/**
 * What the catalog needs from a provider, whatever its `kind`: walk the catalog (categories, then each
 * category's definitions), fetch values live, resolve a municipality name. All methods throw
 * `ProviderError` when the provider fails.
 */
export interface ProviderConnector {
  categories(): Promise<WalkResult<Category>>;
  indicators(categorySlug: string): Promise<WalkResult<IndicatorDefinition>>;
  valuesByGeocode(
    geocode: string,
    filter: { indicatorId: string; category?: string | undefined; year?: number | undefined; limit: number },
    signal?: { timeoutMs: number },
  ): Promise<ValuesAnswer>;
  valueSeries(
    indicatorId: string,
    filter: { year?: number | undefined; limit: number },
    signal?: { timeoutMs: number },
  ): Promise<ValuesAnswer>;
  resolveCity(
    name: string,
    signal?: { timeoutMs: number },
  ): Promise<{ cities: City[]; sourceUrl: string; elapsedMs: number }>;
}
