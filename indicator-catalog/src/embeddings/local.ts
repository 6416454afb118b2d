import { contentWords, stem, synonymHeads } from '../text/portuguese';
import { EMBEDDING_DIMENSIONS, type Embedder, normalize } from './port';

/** FNV-1a 32-bit hash of a string (feature hashing needs speed and stability, not cryptography). */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

// Feature weights, tuned once by hand: a shared stem counts most, a shared synonym group almost as much,
// character trigrams carry typo tolerance, stem bigrams reward phrases.
const WEIGHT_STEM = 1;
const WEIGHT_SYNONYM = 0.8;
const WEIGHT_TRIGRAMS_PER_WORD = 0.7;
const WEIGHT_BIGRAM = 0.5;

/**
 * Deterministic local embedder: feature hashing (signed, into `dimensions` buckets) of the folded content
 * words' stems, their synonym-group heads, character trigrams of each word and stem bigrams; L2-normalized.
 * No model, no network, same vector for the same text on every machine.
 * What it can do: match shared words and stems despite accents, case, plurals, small typos, and the
 * paraphrases listed in the synonym table. What it cannot: true semantics; a paraphrase that shares no word,
 * stem or synonym group with the definition scores near zero.
 */
export class LocalEmbedder implements Embedder {
  readonly id: string;
  readonly batchSize = 256;

  constructor(readonly dimensions: number = EMBEDDING_DIMENSIONS) {
    this.id = `local-hash-v1:${dimensions}`;
  }

  /** Never throws; resolves at once. */
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }

  /** Synchronous form of `embed` for one text. */
  embedOne(text: string): Float32Array {
    const v = new Float32Array(this.dimensions);
    const add = (feature: string, weight: number) => {
      const h = fnv1a(feature);
      // The top bit picks the sign, so that colliding features cancel out on average instead of adding up.
      v[h % this.dimensions] = (v[h % this.dimensions] as number) + (h & 0x80000000 ? -weight : weight);
    };
    const ws = contentWords(text);
    let previous: string | undefined;
    for (const w of ws) {
      const s = stem(w);
      add(`w:${s}`, WEIGHT_STEM);
      for (const head of synonymHeads(w)) add(`w:${stem(head)}`, WEIGHT_SYNONYM);
      const padded = `#${w}#`;
      const count = Math.max(1, padded.length - 2);
      const weight = WEIGHT_TRIGRAMS_PER_WORD / Math.sqrt(count);
      for (let i = 0; i + 3 <= padded.length; i++) add(`c:${padded.slice(i, i + 3)}`, weight);
      if (previous !== undefined) add(`b:${previous}_${s}`, WEIGHT_BIGRAM);
      previous = s;
    }
    return normalize(v);
  }
}
