import MiniSearch from 'minisearch';
import type { Municipality } from './data';

/** Lower-case, no diacritics. */
const fold = (text: string) =>
  text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
/** Letters and digits only ("Pau d'Arco" and "pau darco" compare equal). */
const compact = (text: string) => fold(text).replace(/[^\p{L}\p{N}]+/gu, '');

const UFS = new Set(
  'AC AL AP AM BA CE DF ES GO MA MT MS MG PA PB PR PE PI RJ RN RS RO RR SC SP SE TO'.split(' '),
);

export interface CityMatch extends Municipality {
  /** 1 for an exact (folded) name match, lower for fuzzy ones. */
  score: number;
}

/**
 * Fuzzy resolution of a municipality name (`GET /ibge/cities?name`): accent and case-insensitive, typo
 * tolerant (edit distance up to about a quarter of each word through MiniSearch), with an optional state
 * suffix (`Santa Maria - RS`, `Santa Maria/RS`, `Santa Maria (RS)`). Exact folded matches come first; among
 * equal matches the more populous municipality comes first ("São Paulo" is the capital, not its homonyms).
 */
export class CityMatcher {
  private readonly index: MiniSearch<Municipality & { id: string }>;
  private readonly byCompactName = new Map<string, Municipality[]>();
  private readonly byGeocode: Map<string, Municipality>;

  constructor(
    municipalities: readonly Municipality[],
    private readonly populationOf: (geocode: string) => number,
  ) {
    this.byGeocode = new Map(municipalities.map((m) => [m.geocode, m]));
    this.index = new MiniSearch({
      idField: 'id',
      fields: ['name'],
      processTerm: (term) => fold(term),
    });
    this.index.addAll(municipalities.map((m) => ({ ...m, id: m.geocode })));
    for (const m of municipalities) {
      const key = compact(m.name);
      const list = this.byCompactName.get(key) ?? [];
      list.push(m);
      this.byCompactName.set(key, list);
    }
  }

  /** Municipality of a 7-digit geocode. */
  get(geocode: string): Municipality | undefined {
    return this.byGeocode.get(geocode);
  }

  /** Matches for `query`, best first, at most `limit`. */
  match(query: string, limit = 50): CityMatch[] {
    let name = query.trim();
    let uf: string | undefined;
    const suffix = /^(.+?)\s*(?:[-,/–]\s*|\(\s*|\s+)([A-Za-z]{2})\s*\)?$/.exec(name);
    if (suffix?.[1] && suffix[2] && UFS.has(suffix[2].toUpperCase())) {
      name = suffix[1];
      uf = suffix[2].toUpperCase();
    }
    if (compact(name) === '') return [];
    const byPopulation = (a: CityMatch, b: CityMatch) =>
      b.score - a.score || this.populationOf(b.geocode) - this.populationOf(a.geocode);
    const inState = (m: Municipality) => uf === undefined || m.uf === uf;
    const exact = (this.byCompactName.get(compact(name)) ?? [])
      .filter(inState)
      .map((m) => ({ ...m, score: 1 }));
    const fuzzyOptions = {
      fuzzy: (term: string) => (term.length <= 3 ? 0 : term.length <= 5 ? 1 : 0.25),
      prefix: (_term: string, i: number, terms: string[]) => i === terms.length - 1,
      filter: (r: { id: string }) => {
        const m = this.byGeocode.get(r.id);
        return m !== undefined && inState(m);
      },
    };
    let hits = this.index.search(name, { ...fuzzyOptions, combineWith: 'AND' });
    if (hits.length === 0) hits = this.index.search(name, { ...fuzzyOptions, combineWith: 'OR' });
    const top = hits[0]?.score ?? 1;
    const seen = new Set(exact.map((m) => m.geocode));
    const fuzzy: CityMatch[] = [];
    for (const hit of hits) {
      const m = this.byGeocode.get(hit.id as string);
      if (!m || seen.has(m.geocode)) continue;
      // Fuzzy scores stay below an exact match's 1.
      fuzzy.push({ ...m, score: Math.round((0.9 * hit.score * 1000) / top) / 1000 });
    }
    return [...exact.sort(byPopulation), ...fuzzy.sort(byPopulation)].slice(0, limit);
  }
}
