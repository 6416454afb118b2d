import type { Logger } from '@notary/platform/log';
import { errorMessage } from '@notary/shared';
import type { Embedder } from '../embeddings/port';
import type { QueryEmbeddingCache } from '../embeddings/query-cache';
import { compact } from '../text/portuguese';
import type { VectorIndex } from '../vector-index/port';
import type { CatalogSnapshot, IndicatorDoc } from './catalog-cache';

/** Reciprocal rank fusion constant (Cormack et al. 2009 use 60): damps the weight of the very top ranks. */
const RRF_K = 60;
/** Candidates taken from each leg before fusion. */
const LEG_DEPTH = 50;

export interface RankedIndicator {
  doc: IndicatorDoc;
  /**
   * 0..1: 1 for an exact code or name match; otherwise the fused reciprocal-rank score divided by the best
   * possible one (first in both legs).
   */
  score: number;
  exact: boolean;
  /** 1-based rank in each leg, when the indicator came up there. */
  semanticRank?: number;
  lexicalRank?: number;
}

export interface RankDeps {
  embedder: Embedder;
  index: VectorIndex;
  /** Recently embedded queries of `embedder` (default: every query is embedded). */
  queryEmbeddings?: QueryEmbeddingCache | undefined;
  /** Where a failed query embedding is reported (default: nowhere). */
  log?: Logger;
}

/**
 * Semantic leg alone: the query's embedding against the vector index, best first, only points that are
 * committed definitions of providers embedded with the current embedder. Empty when the embedder fails
 * (the search then relies on the lexical leg; the failure is logged).
 */
export async function semanticLeg(
  deps: RankDeps,
  snapshot: CatalogSnapshot,
  query: string,
  depth = LEG_DEPTH,
): Promise<IndicatorDoc[]> {
  const providerSlugs = [...snapshot.providers.values()]
    .filter((p) => p.embedderId === deps.embedder.id)
    .map((p) => p.slug);
  if (providerSlugs.length === 0 || snapshot.docs.size === 0) return [];
  let vector: Float32Array;
  try {
    vector =
      deps.queryEmbeddings?.embedder === deps.embedder
        ? await deps.queryEmbeddings.embed(query)
        : ((await deps.embedder.embed([query]))[0] as Float32Array);
  } catch (e) {
    deps.log?.warn(`query embedding failed; lexical leg only: ${errorMessage(e)}`);
    return [];
  }
  const all = providerSlugs.length === snapshot.providers.size;
  const hits = await deps.index.query(vector, { limit: depth, ...(all ? {} : { providerSlugs }) });
  const out: IndicatorDoc[] = [];
  for (const hit of hits) {
    const doc = snapshot.docs.get(hit.id);
    // A point without a committed row is staged by a sync that has not committed, or stale: never shown.
    if (doc && hit.score > 0) out.push(doc);
  }
  return out;
}

/** A query word typed as a code (`POP_EST`, `ECO-PIB`, `IDHM2010`, `IDEB`), not an ordinary word. */
const looksLikeCode = (word: string) =>
  word.length >= 3 && /\p{L}/u.test(word) && (/[_\-\d]/.test(word) || word === word.toUpperCase());

/**
 * Ranks the catalog's indicators for `query`: an exact match of the whole query with an indicator's code or name always
 * comes first (any query word equal to a code too); then the semantic and lexical legs fused by reciprocal rank fusion
 * (score = sum of 1/(60 + rank) over the legs).
 */
export async function rankIndicators(
  deps: RankDeps,
  snapshot: CatalogSnapshot,
  query: string,
  limit: number,
): Promise<RankedIndicator[]> {
  const q = query.trim();
  const [semantic, lexical] = await Promise.all([
    semanticLeg(deps, snapshot, q),
    Promise.resolve(snapshot.lexical.search(q, LEG_DEPTH)),
  ]);
  const entries = new Map<string, RankedIndicator & { fused: number }>();
  const entry = (doc: IndicatorDoc) => {
    let e = entries.get(doc.pointId);
    if (!e) {
      e = { doc, score: 0, fused: 0, exact: false };
      entries.set(doc.pointId, e);
    }
    return e;
  };
  semantic.forEach((doc, i) => {
    const e = entry(doc);
    e.semanticRank = i + 1;
    e.fused += 1 / (RRF_K + i + 1);
  });
  let lexicalRank = 0;
  for (const hit of lexical) {
    const doc = snapshot.docs.get(hit.id);
    if (!doc) continue;
    lexicalRank++;
    const e = entry(doc);
    e.lexicalRank = lexicalRank;
    e.fused += 1 / (RRF_K + lexicalRank);
  }
  const exactIds = new Set([
    ...(snapshot.byCode.get(compact(q)) ?? []),
    ...(snapshot.byName.get(compact(q)) ?? []),
    ...q
      .split(/\s+/)
      .filter(looksLikeCode)
      .flatMap((word) => snapshot.byCode.get(compact(word)) ?? []),
  ]);
  for (const id of exactIds) {
    const doc = snapshot.docs.get(id);
    if (doc) entry(doc).exact = true;
  }
  const best = 2 / (RRF_K + 1);
  const ranked = [...entries.values()];
  for (const e of ranked) e.score = e.exact ? 1 : Math.min(1, e.fused / best);
  ranked.sort((a, b) => Number(b.exact) - Number(a.exact) || b.fused - a.fused);
  return ranked.slice(0, limit).map(({ fused: _fused, ...rest }) => rest);
}
