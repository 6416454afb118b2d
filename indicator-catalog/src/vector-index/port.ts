/** What the catalog stores beside each vector: enough to map a hit back to its definition and to diff. */
export interface PointPayload {
  providerSlug: string;
  indicatorId: string;
  /** SHA-256 (hex) of the search text and the embedder id; a sync re-embeds only when it changes. */
  contentHash: string;
}

export interface VectorPoint {
  /** UUID (v5 of `providerSlug:indicatorId`, see `pointId`). */
  id: string;
  /** Unit-length vector of the index's dimensions. */
  vector: Float32Array;
  payload: PointPayload;
}

export interface VectorHit {
  id: string;
  /** Cosine similarity, -1..1, higher is closer. */
  score: number;
  payload: PointPayload;
}

/**
 * Vector index port: cosine similarity over 1536-dimension points with a small payload. Implementations: the embedded
 * in-process index (default; persisted to a file) and Qdrant.
 */
export interface VectorIndex {
  readonly kind: 'embedded' | 'qdrant';
  /**
   * Opens the index: loads the embedded file, or creates the Qdrant collection (cosine, payload indexes)
   * when missing. @throws Error when an existing index has other dimensions.
   */
  init(): Promise<void>;
  /** Inserts or replaces points by id. */
  upsert(points: readonly VectorPoint[]): Promise<void>;
  /** Removes points by id (unknown ids are ignored). */
  remove(ids: readonly string[]): Promise<void>;
  /** Removes every point of one provider. */
  removeProvider(providerSlug: string): Promise<void>;
  /** The `limit` nearest points to `vector`, best first, optionally only of the given providers. */
  query(
    vector: Float32Array,
    options: { limit: number; providerSlugs?: readonly string[] },
  ): Promise<VectorHit[]>;
  /** Every point of one provider: id -> payload (the sync's diff input). */
  listProvider(providerSlug: string): Promise<Map<string, PointPayload>>;
  /** Number of points, of one provider or of all. */
  count(providerSlug?: string): Promise<number>;
  /** Makes writes durable (the embedded index writes its file; Qdrant writes are durable already). */
  persist(): Promise<void>;
  close(): Promise<void>;
}
