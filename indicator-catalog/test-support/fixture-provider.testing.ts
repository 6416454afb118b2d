import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import express from 'express';

export interface FixtureDefinition {
  id: string;
  name: string;
  category: string;
  unit?: string;
  description?: string;
}

/** What one request answers, decided by `behavior` (default: the normal page). */
export type FixtureBehavior =
  | { kind: 'normal' }
  | { kind: 'status'; status: number }
  | { kind: 'delay'; ms: number }
  /** Answers the data of page `page` (a provider that ignores the page parameter). */
  | { kind: 'page'; page: number }
  /** Answers the normal data but announces `totalPages`. */
  | { kind: 'totalPages'; totalPages: number }
  | { kind: 'body'; body: unknown }
  /** Answers `status` with `text` as it is (a body the catalog must never echo). */
  | { kind: 'raw'; status: number; text: string }
  /** Redirects (`status`, default 302) to `location`. */
  | { kind: 'redirect'; location: string; status?: number }
  /**
   * Answers 200 with `bytes` bytes of JSON-looking filler, written as fast as the client reads; with
   * `declareLength` a `Content-Length` announces them, else the body is chunked. Each such answer's fate is
   * pushed to `streams`.
   */
  | { kind: 'stream'; bytes: number; declareLength?: boolean };

/** How a `stream` answer ended: bytes written, and whether the client took them all. */
export interface StreamFate {
  written: number;
  completed: boolean;
}

export interface FixtureRequest {
  /** Path without query, e.g. `/indicator-types/saude/indicators`. */
  path: string;
  page: number;
  query: Record<string, string>;
}

export interface FixtureProvider {
  url: string;
  categories: { slug: string; name: string }[];
  /** Mutable: tests change, add and remove definitions between syncs. */
  definitions: FixtureDefinition[];
  pageSize: number;
  behavior: (request: FixtureRequest) => FixtureBehavior;
  /** Every request, in order. */
  requests: FixtureRequest[];
  /** One promise per `stream` answer, settled when its connection closes. */
  streams: Promise<StreamFate>[];
  close(): Promise<void>;
}

/**
 * A scriptable provider of the `geo-indica-rest` contract on 127.0.0.1 for tests and the benchmark: given
 * categories and definitions, paginated by `pageSize`, with per-request fault injection (`behavior`): HTTP
 * errors, delays (timeouts), a page that repeats, a lying `totalPages`, a body that breaks the contract.
 * Values: every definition has the deterministic series value = year - 2000 for every geocode; cities:
 * any name resolves to `{geocode:'3550308', name:'São Paulo', uf:'SP'}` except `nowhere` (no match).
 */
export async function startFixtureProvider(options: {
  categories: { slug: string; name: string }[];
  definitions: FixtureDefinition[];
  pageSize?: number;
}): Promise<FixtureProvider> {
  const provider: FixtureProvider = {
    url: '',
    categories: options.categories,
    definitions: options.definitions,
    pageSize: options.pageSize ?? 50,
    behavior: () => ({ kind: 'normal' }),
    requests: [],
    streams: [],
    close: async () => undefined,
  };
  const app = express();
  app.set('etag', false);
  const page = <T>(items: T[], n: number) => ({
    data: items.slice((n - 1) * provider.pageSize, n * provider.pageSize),
    pagination: { page: n, totalPages: Math.ceil(items.length / provider.pageSize) },
  });
  app.use((req, res, next) => {
    void (async () => {
      const query = Object.fromEntries(Object.entries(req.query).map(([k, v]) => [k, String(v)]));
      const request: FixtureRequest = { path: req.path, page: Number(query.page ?? 1) || 1, query };
      provider.requests.push(request);
      const b = provider.behavior(request);
      if (b.kind === 'status') return void res.status(b.status).json({ message: 'injected' });
      if (b.kind === 'delay') await sleep(b.ms);
      if (b.kind === 'body') return void res.json(b.body);
      if (b.kind === 'raw') return void res.status(b.status).type('text/plain').send(b.text);
      if (b.kind === 'redirect') return void res.redirect(b.status ?? 302, b.location);
      if (b.kind === 'stream') return void provider.streams.push(streamFiller(res, b));
      res.locals.behavior = b;
      next();
    })();
  });
  const streamFiller = (res: express.Response, b: { bytes: number; declareLength?: boolean }) =>
    new Promise<StreamFate>((resolve) => {
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      let written = 0;
      res.status(200).type('application/json');
      if (b.declareLength) res.setHeader('Content-Length', String(b.bytes));
      res.on('close', () => resolve({ written, completed: res.writableFinished }));
      const pump = () => {
        while (written < b.bytes) {
          const part = chunk.subarray(0, Math.min(chunk.length, b.bytes - written));
          written += part.length;
          if (!res.write(part)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
  const respond = <T>(res: express.Response, items: T[], n: number) => {
    const b = res.locals.behavior as FixtureBehavior;
    const answer = page(items, b.kind === 'page' ? b.page : n);
    if (b.kind === 'totalPages') answer.pagination.totalPages = b.totalPages;
    if (b.kind === 'page') answer.pagination.page = n;
    res.json(answer);
  };
  app.get('/indicator-types', (req, res) => {
    const counted = provider.categories.map((c) => ({
      ...c,
      count: provider.definitions.filter((d) => d.category === c.slug).length,
    }));
    respond(res, counted, Number(req.query.page ?? 1));
  });
  app.get('/indicator-types/:slug/indicators', (req, res) => {
    respond(
      res,
      provider.definitions.filter((d) => d.category === req.params.slug),
      Number(req.query.page ?? 1),
    );
  });
  const series = (id: string, geocode: string) =>
    [2021, 2020, 2019].map((year) => ({
      indicatorId: id,
      geocode,
      city: 'São Paulo',
      year,
      value: year - 2000,
      unit: 'u',
    }));
  app.get('/indicators/by-geocode/:geocode', (req, res) => {
    const id = String(req.query.indicator ?? '');
    const year = req.query.year ? Number(req.query.year) : undefined;
    respond(
      res,
      series(id, req.params.geocode).filter((v) => year === undefined || v.year === year),
      Number(req.query.page ?? 1),
    );
  });
  app.get('/indicator-values', (req, res) => {
    respond(res, series(String(req.query.indicatorId ?? ''), '3550308'), Number(req.query.page ?? 1));
  });
  app.get('/ibge/cities', (req, res) => {
    const name = String(req.query.name ?? '');
    respond(res, name === 'nowhere' ? [] : [{ geocode: '3550308', name: 'São Paulo', uf: 'SP' }], 1);
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  provider.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return provider;
}

const SUBJECTS = [
  'população',
  'mortalidade',
  'matrículas',
  'receita',
  'despesa',
  'empregos',
  'veículos',
  'domicílios',
  'leitos',
  'escolas',
  'vacinação',
  'renda',
  'exportações',
  'desmatamento',
  'homicídios',
  'esgoto',
  'água',
  'energia',
  'internet',
  'rebanho',
  'soja',
  'impostos',
  'salários',
  'nascimentos',
  'óbitos',
];
const QUALIFIERS = [
  'urbana',
  'rural',
  'feminina',
  'masculina',
  'infantil',
  'idosa',
  'municipal',
  'estadual',
  'per capita',
  'por mil habitantes',
  'acumulada',
  'anual',
  'mensal',
  'total',
  'média',
  'mediana',
];
const GROUPS = [
  'de 0 a 4 anos',
  'de 5 a 14 anos',
  'de 15 a 29 anos',
  'de 30 a 59 anos',
  'de 60 anos ou mais',
];
const CATEGORY_NAMES = [
  'Demografia',
  'Saúde',
  'Educação',
  'Economia',
  'Trabalho',
  'Saneamento',
  'Meio ambiente',
  'Segurança',
  'Finanças',
  'Infraestrutura',
];

/**
 * `count` synthetic but varied definitions over 10 categories (deterministic): names combine a subject, a
 * qualifier and an age group, so that search texts differ the way a large statistical catalog's do.
 */
export function syntheticCatalog(count: number) {
  const categories = CATEGORY_NAMES.map((name, i) => ({ slug: `cat-${i}`, name }));
  const definitions: FixtureDefinition[] = [];
  for (let i = 0; i < count; i++) {
    const subject = SUBJECTS[i % SUBJECTS.length] as string;
    const qualifier = QUALIFIERS[Math.floor(i / SUBJECTS.length) % QUALIFIERS.length] as string;
    const group = GROUPS[Math.floor(i / (SUBJECTS.length * QUALIFIERS.length)) % GROUPS.length] as string;
    const serial = Math.floor(i / (SUBJECTS.length * QUALIFIERS.length * GROUPS.length));
    definitions.push({
      id: `SYN_${String(i).padStart(6, '0')}`,
      name: `${subject} ${qualifier} ${group}${serial ? ` (série ${serial})` : ''}`,
      category: `cat-${i % categories.length}`,
      unit: '%',
      description: `Indicador sintético ${i} sobre ${subject}`,
    });
  }
  return { categories, definitions };
}
