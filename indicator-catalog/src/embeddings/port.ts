/** Dimensions of every embedding in the catalog (spec, What the service does: synchronization step 2, 1536). */
export const EMBEDDING_DIMENSIONS = 1536;

/**
 * Embeddings port: turns texts into unit-length vectors of `dimensions` floats.
 * Implementations: the deterministic local embedder (default) and an OpenAI-compatible API.
 */
export interface Embedder {
  /**
   * Identifies the vector space (e.g. `local-hash-v1`, `openai:text-embedding-3-small:1536`). Part of the
   * content hash of every indexed definition: changing the embedder re-embeds everything on the next sync.
   */
  readonly id: string;
  readonly dimensions: number;
  /** Largest number of texts per `embed` call (the sync batches by it). */
  readonly batchSize: number;
  /**
   * Embeds `texts`, one L2-normalized vector per text, in order.
   * @throws Error when the backing service fails after its own retries.
   */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

/** Scales `v` in place to unit length (a zero vector stays zero) and returns it. */
export function normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += (v[i] as number) * (v[i] as number);
  if (sum === 0) return v;
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) * inv;
  return v;
}
