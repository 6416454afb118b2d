import type { Embedder } from './port';

/**
 * The vectors of recently searched query texts, so that a repeated query does not go to the embedder again
 * (with the OpenAI-compatible embedder: one API round trip less per search). A running catalog never changes
 * its embedder, so a text's vector stays right for the process's lifetime. At most `capacity` texts are kept
 * (least recently used evicted; 512 x 1536 float32 is 3 MB). Concurrent searches of one text share one
 * embedder call; a failed call is not kept, so the next search tries again.
 */
export class QueryEmbeddingCache {
  private readonly vectors = new Map<string, Promise<Float32Array>>();

  constructor(
    readonly embedder: Embedder,
    private readonly capacity = 512,
  ) {}

  /**
   * The unit vector of `text` (1 x `embedder.dimensions`); shared with other callers: never modify it.
   * @throws what `embedder.embed` throws.
   */
  embed(text: string): Promise<Float32Array> {
    const known = this.vectors.get(text);
    if (known) {
      // Map keeps insertion order: re-inserting marks the text as the most recently used.
      this.vectors.delete(text);
      this.vectors.set(text, known);
      return known;
    }
    const pending = this.embedder.embed([text]).then(([vector]) => {
      if (!vector) throw new Error('the embedder answered no vector');
      return vector;
    });
    this.vectors.set(text, pending);
    pending.catch(() => {
      if (this.vectors.get(text) === pending) this.vectors.delete(text);
    });
    if (this.vectors.size > this.capacity) {
      const oldest = this.vectors.keys().next().value as string;
      this.vectors.delete(oldest);
    }
    return pending;
  }
}
