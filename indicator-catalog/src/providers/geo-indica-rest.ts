import {
  type Category,
  CategorySchema,
  CitySchema,
  type IndicatorDefinition,
  IndicatorDefinitionSchema,
  IndicatorValueSchema,
  pageEnvelope,
} from './contract';
import { getJson, type HttpClientOptions } from './http-client';
import { walkPages } from './paginate';
import type { ConnectorOptions, ProviderConnector, ValuesAnswer } from './port';

const CategoriesPage = pageEnvelope(CategorySchema);
const DefinitionsPage = pageEnvelope(IndicatorDefinitionSchema);
const ValuesPage = pageEnvelope(IndicatorValueSchema);
const CitiesPage = pageEnvelope(CitySchema);

/**
 * Connector of kind `geo-indica-rest` (spec, Endpoints): the five paginated GET endpoints at the
 * provider's base URL. Walks use the provider's default page size; value calls ask `pageSize` (an
 * extension a provider may ignore: the answer is cut to the asked number anyway).
 */
export class GeoIndicaRestConnector implements ProviderConnector {
  private readonly http: HttpClientOptions;

  constructor(
    private readonly baseUrl: string,
    private readonly options: ConnectorOptions,
  ) {
    this.http = { timeoutMs: options.timeoutMs, retries: options.retries, egress: options.egress };
  }

  /** `GET /indicator-types`, every page. */
  categories() {
    return walkPages<Category>(
      async (page) =>
        (await getJson(this.baseUrl, '/indicator-types', { page }, CategoriesPage, this.http)).body,
      { maxPages: this.options.maxPages },
    );
  }

  /** `GET /indicator-types/:slug/indicators`, every page. */
  indicators(categorySlug: string) {
    const path = `/indicator-types/${encodeURIComponent(categorySlug)}/indicators`;
    return walkPages<IndicatorDefinition>(
      async (page) => (await getJson(this.baseUrl, path, { page }, DefinitionsPage, this.http)).body,
      { maxPages: this.options.maxPages },
    );
  }

  /** `GET /indicators/by-geocode/:geocode?type&indicator&year`: first page, most recent year first. */
  async valuesByGeocode(
    geocode: string,
    filter: { indicatorId: string; category?: string | undefined; year?: number | undefined; limit: number },
    signal?: { timeoutMs: number },
  ): Promise<ValuesAnswer> {
    const answer = await getJson(
      this.baseUrl,
      `/indicators/by-geocode/${encodeURIComponent(geocode)}`,
      { type: filter.category, indicator: filter.indicatorId, year: filter.year, pageSize: filter.limit },
      ValuesPage,
      { ...this.http, timeoutMs: signal?.timeoutMs ?? this.http.timeoutMs, retries: 0 },
    );
    const values = answer.body.data.filter(
      (v) =>
        (v.indicatorId === undefined || v.indicatorId === filter.indicatorId) &&
        v.geocode === geocode &&
        (filter.year === undefined || v.year === filter.year),
    );
    return {
      values: values.slice(0, filter.limit),
      sourceUrl: answer.url,
      retrievedAt: answer.retrievedAt,
      elapsedMs: answer.elapsedMs,
    };
  }

  /** `GET /indicator-values?indicatorId` (plus `year`, an extension): first page, most recent year first. */
  async valueSeries(
    indicatorId: string,
    filter: { year?: number | undefined; limit: number },
    signal?: { timeoutMs: number },
  ): Promise<ValuesAnswer> {
    const answer = await getJson(
      this.baseUrl,
      '/indicator-values',
      { indicatorId, year: filter.year, pageSize: filter.limit },
      ValuesPage,
      { ...this.http, timeoutMs: signal?.timeoutMs ?? this.http.timeoutMs, retries: 0 },
    );
    const values = answer.body.data.filter(
      (v) =>
        (v.indicatorId === undefined || v.indicatorId === indicatorId) &&
        (filter.year === undefined || v.year === filter.year),
    );
    return {
      values: values.slice(0, filter.limit),
      sourceUrl: answer.url,
      retrievedAt: answer.retrievedAt,
      elapsedMs: answer.elapsedMs,
    };
  }

  /** `GET /ibge/cities?name`: the provider's fuzzy matches, best first (first page). */
  async resolveCity(name: string, signal?: { timeoutMs: number }) {
    const answer = await getJson(this.baseUrl, '/ibge/cities', { name }, CitiesPage, {
      ...this.http,
      timeoutMs: signal?.timeoutMs ?? this.http.timeoutMs,
      retries: 0,
    });
    return { cities: answer.body.data, sourceUrl: answer.url, elapsedMs: answer.elapsedMs };
  }
}
