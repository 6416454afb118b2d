import MiniSearch from 'minisearch';
import { fold, STOP_WORDS, stem, synonymHeads, words } from '../text/portuguese';

export interface LexicalDocument {
  /** Point id. */
  id: string;
  code: string;
  name: string;
  category: string;
  description: string;
  unit: string;
}

const unique = (terms: string[]) => [...new Set(terms)];

/**
 * Lexical leg of the search: BM25 (MiniSearch's BM25+) over folded, stemmed words of the code, name,
 * category, description and unit of every definition, with typo tolerance (edit distance up to 20% of a
 * word of 5+ letters), prefix matching of words of 4+ letters and the synonym table on the query side.
 * Both the folded word and its stem are indexed, so that a typo still meets the unstemmed word.
 */
export class LexicalIndex {
  private readonly index = new MiniSearch<LexicalDocument>({
    fields: ['code', 'name', 'category', 'description', 'unit'],
    tokenize: (text) => words(text),
    processTerm: (term) => {
      const w = fold(term);
      if (STOP_WORDS.has(w)) return null;
      const s = stem(w);
      return s === w ? w : [w, s];
    },
  });

  constructor(documents: readonly LexicalDocument[]) {
    this.index.addAll(documents);
  }

  /** Point ids matching `query`, best first, with their BM25 scores. */
  search(query: string, limit: number): { id: string; score: number }[] {
    const hits = this.index.search(query, {
      boost: { code: 3, name: 2.5, category: 1, description: 1, unit: 0.5 },
      fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
      prefix: (term) => term.length >= 4,
      combineWith: 'OR',
      processTerm: (term) => {
        const w = fold(term);
        if (STOP_WORDS.has(w)) return null;
        return unique([w, stem(w), ...synonymHeads(w).flatMap((h) => [h, stem(h)])]);
      },
    });
    return hits.slice(0, limit).map((h) => ({ id: String(h.id), score: h.score }));
  }
}
