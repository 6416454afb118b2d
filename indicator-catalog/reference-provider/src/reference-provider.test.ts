import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadReferenceData, type ReferenceData } from './data';
import { type RunningProvider, startReferenceProvider } from './server';

interface Page<T> {
  data: T[];
  pagination: { page: number; totalPages: number };
}
interface Value {
  indicatorId: string;
  geocode: string;
  city: string;
  year: number;
  value: number;
  unit: string;
}

let data: ReferenceData;
let provider: RunningProvider;
const get = async <T>(path: string): Promise<{ status: number; body: T }> => {
  const response = await fetch(`${provider.url}${path}`);
  return { status: response.status, body: (await response.json()) as T };
};
const pop = (geocode: string, year: number) => data.population.get(geocode)?.byYear.get(year) as number;

beforeAll(async () => {
  data = loadReferenceData();
  provider = await startReferenceProvider({ host: '127.0.0.1', port: 0, data });
});
afterAll(() => provider?.close());

describe('reference provider data', () => {
  it('has the 102 definitions, 5,570 municipalities and their 2012-2021 estimates', () => {
    expect(data.definitions).toHaveLength(102);
    expect(data.municipalities).toHaveLength(5570);
    expect(data.population.size).toBe(5570);
    expect(data.years).toEqual([2012, 2013, 2014, 2015, 2016, 2017, 2018, 2019, 2020, 2021]);
    expect(data.definitions.filter((d) => d.computedFrom === 'populacao').map((d) => d.id)).toEqual([
      'POP_EST',
      'POP_CRESC_ANUAL',
      'POP_CRESC_ABS',
      'POP_PART_UF',
      'POP_RANK_UF',
      'POP_VAR_2012',
    ]);
    const municipalityGeocodes = new Set(data.municipalities.map((m) => m.geocode));
    for (const geocode of data.population.keys()) expect(municipalityGeocodes.has(geocode)).toBe(true);
  });
});

describe('contract endpoints', () => {
  it('lists categories and paginates definitions', async () => {
    const categories = await get<Page<{ slug: string; name: string; count: number }>>('/indicator-types');
    expect(categories.body.pagination).toEqual({ page: 1, totalPages: 1 });
    expect(categories.body.data).toHaveLength(11);
    expect(categories.body.data[0]).toEqual({ slug: 'demografia', name: 'Demografia', count: 14 });
    expect(categories.body.data.reduce((n, c) => n + c.count, 0)).toBe(102);
    const page2 = await get<Page<{ id: string; hasValues: boolean }>>(
      '/indicator-types/demografia/indicators?pageSize=5&page=2',
    );
    expect(page2.body.pagination).toEqual({ page: 2, totalPages: 3 });
    expect(page2.body.data.map((d) => d.id)).toEqual([
      'POP_VAR_2012',
      'DEM_DENS',
      'DEM_URB',
      'DEM_ENVELH',
      'DEM_RAZAO_SEXO',
    ]);
    expect(page2.body.data[0]?.hasValues).toBe(true);
    expect((await get<Page<unknown>>('/indicator-types/demografia/indicators?page=9')).body).toEqual({
      data: [],
      pagination: { page: 9, totalPages: 1 },
    });
    expect((await get('/indicator-types/nope/indicators')).status).toBe(404);
    expect((await get('/indicator-types?page=0')).status).toBe(400);
    expect((await get('/indicator-types?pageSize=1001')).status).toBe(400);
  });

  it('computes the population indicators faithfully', async () => {
    const sp = '3550308';
    const { body } = await get<Page<Value>>(`/indicators/by-geocode/${sp}?type=demografia&year=2021`);
    const by = Object.fromEntries(body.data.map((v) => [v.indicatorId, v.value]));
    expect(by.POP_EST).toBe(pop(sp, 2021));
    expect(by.POP_CRESC_ABS).toBe(pop(sp, 2021) - pop(sp, 2020));
    expect(by.POP_CRESC_ANUAL).toBeCloseTo((pop(sp, 2021) / pop(sp, 2020) - 1) * 100, 4);
    expect(by.POP_VAR_2012).toBeCloseTo((pop(sp, 2021) / pop(sp, 2012) - 1) * 100, 4);
    const spState = [...data.population.values()]
      .filter((s) => s.uf === 'SP')
      .reduce((n, s) => n + (s.byYear.get(2021) ?? 0), 0);
    expect(by.POP_PART_UF).toBeCloseTo((pop(sp, 2021) / spState) * 100, 4);
    expect(by.POP_RANK_UF).toBe(1);
    expect(Object.keys(by)).toHaveLength(6);
    // Growth needs the year before: none in 2012.
    const first = await get<Page<Value>>(`/indicators/by-geocode/${sp}?indicator=POP_CRESC_ANUAL&year=2012`);
    expect(first.body).toEqual({ data: [], pagination: { page: 1, totalPages: 0 } });
  });

  it('state shares add up to 100% and ranks run 1..n in every state', async () => {
    const series = await get<Page<Value>>(
      '/indicator-values?indicatorId=POP_PART_UF&year=2019&pageSize=1000',
    );
    expect(series.body.pagination.totalPages).toBe(6);
    const all: Value[] = [];
    for (let page = 1; page <= 6; page++) {
      all.push(
        ...(
          await get<Page<Value>>(
            `/indicator-values?indicatorId=POP_PART_UF&year=2019&pageSize=1000&page=${page}`,
          )
        ).body.data,
      );
    }
    expect(all).toHaveLength(5570);
    const byState = new Map<string, number>();
    for (const v of all) {
      const uf = data.population.get(v.geocode)?.uf as string;
      byState.set(uf, (byState.get(uf) ?? 0) + v.value);
    }
    expect(byState.size).toBe(27);
    for (const total of byState.values()) expect(total).toBeCloseTo(100, 1);
    const df = await get<Page<Value>>('/indicators/by-geocode/5300108?indicator=POP_RANK_UF&year=2021');
    expect(df.body.data[0]?.value).toBe(1);
  });

  it('serves series most recent year first and an empty page for definitions without values', async () => {
    const series = await get<Page<Value>>('/indicator-values?indicatorId=POP_EST&pageSize=3');
    expect(series.body.data.map((v) => [v.year, v.geocode])).toEqual([
      [2021, '1100015'],
      [2021, '1100023'],
      [2021, '1100031'],
    ]);
    expect(series.body.pagination.totalPages).toBe(Math.ceil(55_700 / 3));
    expect((await get('/indicator-values?indicatorId=SAU_DENGUE')).body).toEqual({
      data: [],
      pagination: { page: 1, totalPages: 0 },
    });
    expect((await get('/indicator-values?indicatorId=NOPE')).status).toBe(404);
    expect((await get('/indicator-values')).status).toBe(400);
    expect((await get('/indicators/by-geocode/12345')).status).toBe(400);
    expect((await get('/indicators/by-geocode/9999999')).status).toBe(404);
  });

  it('resolves municipality names: accents, case, typos, state suffix, biggest first', async () => {
    const first = async (name: string) =>
      (
        await get<Page<{ geocode: string; name: string; uf: string }>>(
          `/ibge/cities?name=${encodeURIComponent(name)}`,
        )
      ).body.data[0];
    expect(await first('sao paulo')).toMatchObject({ geocode: '3550308', name: 'São Paulo', uf: 'SP' });
    expect(await first('SÃO PAULO')).toMatchObject({ geocode: '3550308' });
    expect(await first('Sao Paolo')).toMatchObject({ geocode: '3550308' });
    expect(await first('florianopoles')).toMatchObject({ geocode: '4205407' });
    expect(await first('rio de janiero')).toMatchObject({ geocode: '3304557' });
    expect(await first('belo horizont')).toMatchObject({ geocode: '3106200' });
    expect(await first('Santa Maria')).toMatchObject({ uf: 'RS' });
    expect(await first('Santa Maria - RN')).toMatchObject({ geocode: '2409332', uf: 'RN' });
    expect(await first('santa maria/df')).toBeUndefined();
    expect(await first("pau d'arco (TO)")).toMatchObject({ geocode: '1716307' });
    const none = await get<Page<unknown>>('/ibge/cities?name=xyzzyqwv');
    expect(none.body).toEqual({ data: [], pagination: { page: 1, totalPages: 0 } });
    expect((await get('/ibge/cities')).status).toBe(400);
  });
});
