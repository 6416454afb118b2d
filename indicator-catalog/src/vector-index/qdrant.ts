import { joinSecrets, redactError, type SecretSet, secretsOfUrl } from '@notary/platform/redact';
import { QdrantClient, type Schemas } from '@qdrant/js-client-rest';
import type { PointPayload, VectorHit, VectorIndex, VectorPoint } from './port';

export interface QdrantIndexOptions {
  url: string;
  apiKey?: string | undefined;
  collection: string;
  dimensions: number;
  /** Request timeout in ms (default 30 s). */
  timeoutMs?: number;
}

const UPSERT_BATCH = 256;
const DELETE_BATCH = 1000;
const SCROLL_PAGE = 1000;

const byProvider = (slug: string): Schemas['Filter'] => ({
  must: [{ key: 'providerSlug', match: { value: slug } }],
});

function toPayload(raw: Schemas['Payload'] | Record<string, unknown> | null | undefined): PointPayload {
  const p = (raw ?? {}) as Record<string, unknown>;
  return {
    providerSlug: String(p.providerSlug ?? ''),
    indicatorId: String(p.indicatorId ?? ''),
    contentHash: String(p.contentHash ?? ''),
  };
}

/**
 * Vector index on Qdrant through `@qdrant/js-client-rest`: one collection with an unnamed cosine vector of
 * `dimensions`, keyword payload indexes on `providerSlug` and `indicatorId`, nearest-neighbour search through the Query
 * API (`POST /collections/{name}/points/query`; Qdrant deprecated `search`). Point ids are UUIDs (Qdrant accepts
 * unsigned integers or UUIDs only). Writes use `wait: true`, so they are durable and visible when the call returns.
 * Every error leaves it redacted of the API key and of every piece of `url` (`secretsOfUrl`, `redactError`).
 */
export class QdrantVectorIndex implements VectorIndex {
  readonly kind = 'qdrant';
  private readonly client: QdrantClient;
  private readonly collection: string;
  private readonly secrets: SecretSet;

  constructor(private readonly options: QdrantIndexOptions) {
    this.collection = options.collection;
    this.secrets = joinSecrets(secretsOfUrl(options.url), options.apiKey);
    const url = new URL(options.url);
    this.client = new QdrantClient({
      url: options.url,
      apiKey: options.apiKey,
      // The client guesses port 6333 when the URL has none; an https URL without a port means 443.
      port: url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 6333,
      timeout: options.timeoutMs ?? 30_000,
      checkCompatibility: false,
    });
  }

  /** @throws Error when the collection exists with another vector size or distance. */
  private async initUnguarded(): Promise<void> {
    const { exists } = await this.client.collectionExists(this.collection);
    if (!exists) {
      try {
        await this.client.createCollection(this.collection, {
          vectors: { size: this.options.dimensions, distance: 'Cosine' },
        });
      } catch (e) {
        // Another catalog instance may have created it in between.
        if (!(await this.client.collectionExists(this.collection)).exists) throw e;
      }
    }
    const info = await this.client.getCollection(this.collection);
    const vectors = info.config.params.vectors as Schemas['VectorParams'] | undefined;
    if (!vectors || vectors.size !== this.options.dimensions || vectors.distance !== 'Cosine') {
      throw new Error(
        `Qdrant collection ${this.collection} is not ${this.options.dimensions}-dimension cosine: ${JSON.stringify(vectors)}`,
      );
    }
    for (const field of ['providerSlug', 'indicatorId']) {
      if (!info.payload_schema[field]) {
        await this.client.createPayloadIndex(this.collection, {
          field_name: field,
          field_schema: 'keyword',
          wait: true,
        });
      }
    }
  }

  private async upsertUnguarded(points: readonly VectorPoint[]): Promise<void> {
    for (let i = 0; i < points.length; i += UPSERT_BATCH) {
      await this.client.upsert(this.collection, {
        wait: true,
        points: points.slice(i, i + UPSERT_BATCH).map((p) => ({
          id: p.id,
          vector: Array.from(p.vector),
          payload: { ...p.payload },
        })),
      });
    }
  }

  private async removeUnguarded(ids: readonly string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += DELETE_BATCH) {
      await this.client.delete(this.collection, { wait: true, points: ids.slice(i, i + DELETE_BATCH) });
    }
  }

  private async removeProviderUnguarded(providerSlug: string): Promise<void> {
    await this.client.delete(this.collection, { wait: true, filter: byProvider(providerSlug) });
  }

  private async queryUnguarded(
    vector: Float32Array,
    options: { limit: number; providerSlugs?: readonly string[] },
  ): Promise<VectorHit[]> {
    const result = await this.client.query(this.collection, {
      query: Array.from(vector),
      limit: options.limit,
      with_payload: true,
      // The hits' vectors are never used: not sent (1,536 floats of JSON each).
      with_vector: false,
      ...(options.providerSlugs
        ? { filter: { must: [{ key: 'providerSlug', match: { any: [...options.providerSlugs] } }] } }
        : {}),
    });
    return result.points.map((p) => ({ id: String(p.id), score: p.score, payload: toPayload(p.payload) }));
  }

  private async listProviderUnguarded(providerSlug: string): Promise<Map<string, PointPayload>> {
    const out = new Map<string, PointPayload>();
    let offset: Schemas['ExtendedPointId'] | undefined;
    for (;;) {
      const page = await this.client.scroll(this.collection, {
        filter: byProvider(providerSlug),
        limit: SCROLL_PAGE,
        with_payload: true,
        with_vector: false,
        ...(offset !== undefined ? { offset } : {}),
      });
      for (const p of page.points) out.set(String(p.id), toPayload(p.payload));
      const next = page.next_page_offset;
      if (next === undefined || next === null || typeof next === 'object') break;
      offset = next;
    }
    return out;
  }

  private async countUnguarded(providerSlug?: string): Promise<number> {
    const result = await this.client.count(this.collection, {
      exact: true,
      ...(providerSlug !== undefined ? { filter: byProvider(providerSlug) } : {}),
    });
    return result.count;
  }

  /** @throws Error when the collection exists with another vector size or distance. */
  init(): Promise<void> {
    return this.guard(() => this.initUnguarded());
  }

  upsert(points: readonly VectorPoint[]): Promise<void> {
    return this.guard(() => this.upsertUnguarded(points));
  }

  remove(ids: readonly string[]): Promise<void> {
    return this.guard(() => this.removeUnguarded(ids));
  }

  removeProvider(providerSlug: string): Promise<void> {
    return this.guard(() => this.removeProviderUnguarded(providerSlug));
  }

  query(
    vector: Float32Array,
    options: { limit: number; providerSlugs?: readonly string[] },
  ): Promise<VectorHit[]> {
    return this.guard(() => this.queryUnguarded(vector, options));
  }

  listProvider(providerSlug: string): Promise<Map<string, PointPayload>> {
    return this.guard(() => this.listProviderUnguarded(providerSlug));
  }

  count(providerSlug?: string): Promise<number> {
    return this.guard(() => this.countUnguarded(providerSlug));
  }

  /** Runs `call`; a rejection is replaced by its redacted copy (`redactError`). */
  private async guard<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (e) {
      throw redactError(e, this.secrets);
    }
  }

  async persist(): Promise<void> {}

  async close(): Promise<void> {}
}
