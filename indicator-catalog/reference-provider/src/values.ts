import type { Definition, PopulationSeries, ReferenceData } from './data';

/** One computed value: indicator, municipality, year. `value` in the definition's unit. */
export interface ComputedValue {
  indicatorId: string;
  geocode: string;
  city: string;
  uf: string;
  year: number;
  value: number;
  unit: string;
}

const round = (n: number, digits: number) => {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
};

type Rule = (series: PopulationSeries, year: number, context: StateContext) => number | undefined;

/** Per (state, year): total population and each municipality's rank (1 = most populous). */
interface StateContext {
  totalByUfYear: Map<string, number>;
  rankByGeocodeYear: Map<string, number>;
}

/**
 * How each indicator with `computado_de = populacao` is computed from the population estimates (persons,
 * 1 July of each year). Percentages keep 4 decimals (a small municipality's share of its state is often
 * below 0.01%). A rule answers undefined for a year it has no inputs for (growth needs the year before).
 */
const RULES: Record<string, Rule> = {
  // The estimate itself.
  POP_EST: (s, y) => s.byYear.get(y),
  // (P(y) / P(y-1) - 1) x 100.
  POP_CRESC_ANUAL: (s, y) => {
    const now = s.byYear.get(y);
    const before = s.byYear.get(y - 1);
    return now === undefined || before === undefined || before === 0
      ? undefined
      : round((now / before - 1) * 100, 4);
  },
  // P(y) - P(y-1).
  POP_CRESC_ABS: (s, y) => {
    const now = s.byYear.get(y);
    const before = s.byYear.get(y - 1);
    return now === undefined || before === undefined ? undefined : now - before;
  },
  // P(y) / sum of P(y) of the state's municipalities x 100.
  POP_PART_UF: (s, y, c) => {
    const now = s.byYear.get(y);
    const total = c.totalByUfYear.get(`${s.uf}:${y}`);
    return now === undefined || !total ? undefined : round((now / total) * 100, 4);
  },
  // Competition ranking within the state by P(y), descending (ties share a position).
  POP_RANK_UF: (s, y, c) => c.rankByGeocodeYear.get(`${s.geocode}:${y}`),
  // (P(y) / P(2012) - 1) x 100; 0 in 2012.
  POP_VAR_2012: (s, y) => {
    const now = s.byYear.get(y);
    const base = s.byYear.get(2012);
    return now === undefined || base === undefined || base === 0
      ? undefined
      : round((now / base - 1) * 100, 4);
  },
};

/** Whether the reference provider can compute values of `definition`. */
export function hasValues(definition: Definition): boolean {
  return definition.computedFrom === 'populacao' && definition.id in RULES;
}

function stateContext(data: ReferenceData): StateContext {
  const totalByUfYear = new Map<string, number>();
  const members = new Map<string, { geocode: string; persons: number }[]>();
  for (const s of data.population.values()) {
    for (const [year, persons] of s.byYear) {
      const key = `${s.uf}:${year}`;
      totalByUfYear.set(key, (totalByUfYear.get(key) ?? 0) + persons);
      const list = members.get(key) ?? [];
      list.push({ geocode: s.geocode, persons });
      members.set(key, list);
    }
  }
  const rankByGeocodeYear = new Map<string, number>();
  for (const [key, list] of members) {
    const year = key.split(':')[1];
    list.sort((a, b) => b.persons - a.persons);
    list.forEach((m, i) => {
      const previous = list[i - 1];
      const rank =
        previous && previous.persons === m.persons
          ? (rankByGeocodeYear.get(`${previous.geocode}:${year}`) ?? i + 1)
          : i + 1;
      rankByGeocodeYear.set(`${m.geocode}:${year}`, rank);
    });
  }
  return { totalByUfYear, rankByGeocodeYear };
}

/**
 * The values of the reference provider, computed once from the population estimates: for each computed
 * indicator, each municipality's values most recent year first, and the whole series (most recent year
 * first, then geocode) for `/indicator-values`.
 */
export class ValueStore {
  private readonly context: StateContext;
  private readonly byIndicator = new Map<string, Map<string, ComputedValue[]>>();
  private readonly seriesCache = new Map<string, ComputedValue[]>();
  private readonly definitions: Map<string, Definition>;

  constructor(private readonly data: ReferenceData) {
    this.context = stateContext(data);
    this.definitions = new Map(data.definitions.map((d) => [d.id, d]));
  }

  /** Values of one indicator for one municipality, most recent year first (empty for definitions-only ones). */
  forMunicipality(indicatorId: string, geocode: string): ComputedValue[] {
    return this.indicatorValues(indicatorId).get(geocode) ?? [];
  }

  /** Every value of one indicator, most recent year first, then by geocode. */
  series(indicatorId: string): ComputedValue[] {
    let cached = this.seriesCache.get(indicatorId);
    if (!cached) {
      cached = [...this.indicatorValues(indicatorId).values()].flat();
      cached.sort((a, b) => b.year - a.year || a.geocode.localeCompare(b.geocode));
      this.seriesCache.set(indicatorId, cached);
    }
    return cached;
  }

  private indicatorValues(indicatorId: string): Map<string, ComputedValue[]> {
    const cached = this.byIndicator.get(indicatorId);
    if (cached) return cached;
    const out = new Map<string, ComputedValue[]>();
    const definition = this.definitions.get(indicatorId);
    const rule = definition && hasValues(definition) ? RULES[indicatorId] : undefined;
    if (definition && rule) {
      const years = [...this.data.years].reverse();
      for (const s of this.data.population.values()) {
        const list: ComputedValue[] = [];
        for (const year of years) {
          const value = rule(s, year, this.context);
          if (value === undefined) continue;
          list.push({
            indicatorId,
            geocode: s.geocode,
            city: s.name,
            uf: s.uf,
            year,
            value,
            unit: definition.unit,
          });
        }
        out.set(s.geocode, list);
      }
    }
    this.byIndicator.set(indicatorId, out);
    return out;
  }
}
