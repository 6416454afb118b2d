/**
 * `npm run bench:catalog`: figures of the indicator catalog, printed as a markdown table.
 *
 * 1. Sync throughput: a synthetic provider on 127.0.0.1 serves 10,000 definitions (10 categories, pages of
 *    100); the catalog (in this process, PGlite and the embedded vector index under a temp directory, the
 *    configured embedder: the local one unless OPENAI_API_KEY is set) syncs it three times: first sync
 *    (everything embedded), re-sync with nothing changed, re-sync with 100 renamed definitions. Then the same
 *    first sync through the adapters (real `openai` and Qdrant clients) against the loopback
 *    OpenAI-compatible and Qdrant servers of the tests. Definitions per second = 10,000 / wall time.
 * 2. Search latency: `GET /api/search` over loopback HTTP on the catalog holding the reference provider and
 *    the 10,000 synthetic definitions: 20 warm-up then 200 measured searches, sequential, cycling through the
 *    labeled queries with a municipality (`city`, resolved by the reference provider) for every other one.
 *    Reported p50 and p95 of: the whole request (client side), the providers' own time (municipality
 *    resolution + live values, from the `Server-Timing` header), the catalog's own time (the rest) and,
 *    within it, the ranking (`rank` of `Server-Timing`: query embedding, vector query, lexical leg, fusion).
 *    The search runs on the catalog's defaults (local embedder, embedded vector index, in this process): no
 *    fake OpenAI or Qdrant server takes part in these figures. The providers' time includes the catalog's
 *    own parsing of their answers, and the in-process providers' work.
 * 3. recall@5 of the labeled queries on the reference provider alone, and with the 10,000 synthetic
 *    definitions as distractors.
 *
 * Everything listens on 127.0.0.1 and is stopped at the end, also on failure.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { referenceProviderRegistration } from '../../indicator-catalog/reference-provider/src/registration';
import { startReferenceProvider } from '../../indicator-catalog/reference-provider/src/server';
import { type Catalog, openCatalog } from '../../indicator-catalog/src/catalog';
import { loadConfig } from '../../indicator-catalog/src/config';
import { startHttp } from '../../indicator-catalog/src/http/server';
import { registerProvider } from '../../indicator-catalog/src/providers/service';
import {
  startFixtureProvider,
  syntheticCatalog,
} from '../../indicator-catalog/test-support/fixture-provider.testing';
import { LABELED_QUERIES, measureRecall } from '../../indicator-catalog/test-support/labeled-queries.testing';
import { startOpenAIServer } from '../../indicator-catalog/test-support/openai-server.testing';
import { startQdrantServer } from '../../indicator-catalog/test-support/qdrant-server.testing';

const DEFINITIONS = 10_000;
const PAGE_SIZE = 100;
const WARMUP_SEARCHES = 20;
const SEARCHES = 200;
const CITIES = [
  'São Paulo',
  'Recife',
  'Belo Horizonte',
  'Manaus',
  'Porto Alegre',
  'Curitiba',
  'Salvador',
  'Goiânia',
];

export interface SyncFigure {
  label: string;
  seconds: number;
  definitionsPerSecond: number;
  embedded: number;
}

export interface LatencyFigure {
  p50: number;
  p95: number;
}

export interface CatalogBenchResults {
  embedder: string;
  sync: SyncFigure[];
  search: {
    count: number;
    total: LatencyFigure;
    provider: LatencyFigure;
    catalog: LatencyFigure;
    rank: LatencyFigure;
  };
  recall: { queries: number; hybrid: number; semantic: number; hybridWithDistractors: number };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};
const latency = (values: number[]): LatencyFigure => ({
  p50: percentile(values, 50),
  p95: percentile(values, 95),
});

async function timedSync(catalog: Catalog, slug: string, label: string): Promise<SyncFigure> {
  const started = performance.now();
  const outcome = await catalog.deps.sync.run(slug, 'bench');
  const seconds = (performance.now() - started) / 1000;
  if (outcome.status !== 'ok') throw new Error(`${label}: sync ${outcome.status}: ${outcome.error}`);
  return { label, seconds, definitionsPerSecond: DEFINITIONS / seconds, embedded: outcome.stats.embedded };
}

/** Runs the three measurements; see the file comment. */
export async function benchCatalog(): Promise<CatalogBenchResults> {
  const cleanup: (() => Promise<unknown>)[] = [];
  try {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-bench-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    const reference = await startReferenceProvider({ host: '127.0.0.1', port: 0 });
    cleanup.push(() => reference.close());
    const synthetic = syntheticCatalog(DEFINITIONS);
    const provider = await startFixtureProvider({ ...synthetic, pageSize: PAGE_SIZE });
    cleanup.push(() => provider.close());

    // Both providers are on loopback: allowed by their exact addresses.
    const allowHosts = [reference.url, provider.url].map((u) => new URL(u).host).join(',');
    const config = loadConfig({
      ...process.env,
      CATALOG_DATA_DIR: dataDir,
      CATALOG_REFERENCE_PROVIDER: '0',
      CATALOG_PROVIDER_ALLOW_HOSTS: allowHosts,
    });
    const catalog = await openCatalog(config);
    cleanup.push(() => catalog.close());
    const http = await startHttp(catalog.deps, '127.0.0.1', 0);
    cleanup.push(() => http.close());
    catalog.deps.readiness = { status: 'ok' };

    // 3a. Recall on the reference provider alone.
    const em = catalog.deps.db.fork();
    await registerProvider(em, referenceProviderRegistration(reference.url), catalog.deps.egress);
    const referenceSync = await catalog.deps.sync.run('ibge-referencia', 'bench');
    if (referenceSync.status !== 'ok')
      throw new Error(`reference sync ${referenceSync.status}: ${referenceSync.error}`);
    const recall = await measureRecall(catalog.deps);

    // 1. Sync throughput.
    await registerProvider(
      em,
      {
        slug: 'synthetic',
        name: 'Synthetic provider',
        kind: 'geo-indica-rest',
        baseUrl: provider.url,
        publisherName: 'Synthetic Publisher',
        publisherUrl: 'https://example.org/',
        license: 'CC0 1.0',
      },
      catalog.deps.egress,
    );
    const sync: SyncFigure[] = [];
    sync.push(
      await timedSync(
        catalog,
        'synthetic',
        `first sync (${catalog.deps.embedder.id}, embedded index, PGlite)`,
      ),
    );
    sync.push(await timedSync(catalog, 'synthetic', 're-sync, nothing changed'));
    for (const d of provider.definitions.slice(0, 100)) d.name = `${d.name} revisado`;
    sync.push(await timedSync(catalog, 'synthetic', 're-sync, 100 definitions renamed'));

    // 3b. Recall with 10,000 distractors.
    const withDistractors = await measureRecall(catalog.deps);

    // 2. Search latency over HTTP.
    const totals: number[] = [];
    const providerTimes: number[] = [];
    const own: number[] = [];
    const rankTimes: number[] = [];
    for (let i = 0; i < WARMUP_SEARCHES + SEARCHES; i++) {
      const query = LABELED_QUERIES[i % LABELED_QUERIES.length];
      const params = new URLSearchParams({ q: query?.q ?? 'populacao', limit: '10' });
      if (i % 2 === 0) params.set('city', CITIES[(i / 2) % CITIES.length] as string);
      const started = performance.now();
      const response = await fetch(`${http.url}/api/search?${params}`);
      await response.json();
      const total = performance.now() - started;
      if (response.status !== 200) throw new Error(`search ${params}: HTTP ${response.status}`);
      if (i < WARMUP_SEARCHES) continue;
      const timing = Object.fromEntries(
        (response.headers.get('server-timing') ?? '')
          .split(',')
          .map((part) => /(\w+);dur=([\d.]+)/.exec(part.trim()))
          .filter((m): m is RegExpExecArray => m !== null)
          .map((m) => [m[1], Number(m[2])]),
      ) as Record<string, number>;
      const providerTime = (timing.city ?? 0) + (timing.values ?? 0);
      totals.push(total);
      providerTimes.push(providerTime);
      own.push(total - providerTime);
      rankTimes.push(timing.rank ?? 0);
    }

    // 1b. The same first sync through the adapters against the loopback OpenAI-compatible and Qdrant servers.
    const openai = await startOpenAIServer();
    cleanup.push(() => openai.close());
    const qdrant = await startQdrantServer();
    cleanup.push(() => qdrant.close());
    const adapters = await openCatalog(
      loadConfig({
        CATALOG_DATA_DIR: dataDir,
        OPENAI_API_KEY: openai.apiKey,
        OPENAI_BASE_URL: openai.baseUrl,
        QDRANT_URL: qdrant.url,
        CATALOG_PROVIDER_ALLOW_HOSTS: allowHosts,
      }),
      { memory: true },
    );
    cleanup.push(() => adapters.close());
    await registerProvider(
      adapters.deps.db.fork(),
      {
        slug: 'synthetic',
        name: 'Synthetic provider',
        kind: 'geo-indica-rest',
        baseUrl: provider.url,
        publisherName: 'Synthetic Publisher',
        publisherUrl: 'https://example.org/',
        license: 'CC0 1.0',
      },
      adapters.deps.egress,
    );
    sync.push(
      await timedSync(adapters, 'synthetic', 'first sync via openai + Qdrant clients (loopback servers)'),
    );

    return {
      embedder: catalog.deps.embedder.id,
      sync,
      search: {
        count: SEARCHES,
        total: latency(totals),
        provider: latency(providerTimes),
        catalog: latency(own),
        rank: latency(rankTimes),
      },
      recall: {
        queries: recall.queries,
        hybrid: recall.hybrid,
        semantic: recall.semantic,
        hybridWithDistractors: withDistractors.hybrid,
      },
    };
  } finally {
    for (const step of cleanup.reverse())
      await step().catch((e: unknown) => console.error('[bench] cleanup:', e));
  }
}

/** The results as a markdown table. */
export function reportCatalog(r: CatalogBenchResults): string {
  const ms = (x: number) => `${x.toFixed(1)} ms`;
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const rows = [
    '| Indicator catalog | Figure |',
    '|---|---|',
    ...r.sync.map(
      (s) =>
        `| Sync of ${DEFINITIONS.toLocaleString('en')} definitions: ${s.label} | ${Math.round(s.definitionsPerSecond).toLocaleString('en')} definitions/s (${s.seconds.toFixed(2)} s, ${s.embedded} embedded) |`,
    ),
    `| Search, whole request (${r.search.count} searches, p50 / p95) | ${ms(r.search.total.p50)} / ${ms(r.search.total.p95)} |`,
    `| of which providers' own time (city + live values) | ${ms(r.search.provider.p50)} / ${ms(r.search.provider.p95)} |`,
    `| of which the catalog's own time (ranking, HTTP) | ${ms(r.search.catalog.p50)} / ${ms(r.search.catalog.p95)} |`,
    `| of which ranking (query embedding, vector index, lexical leg) | ${ms(r.search.rank.p50)} / ${ms(r.search.rank.p95)} |`,
    `| recall@5, ${r.recall.queries} labeled queries, ${r.embedder} (hybrid / semantic leg alone) | ${pct(r.recall.hybrid)} / ${pct(r.recall.semantic)} |`,
    `| recall@5 with the ${DEFINITIONS.toLocaleString('en')} synthetic definitions as distractors (hybrid) | ${pct(r.recall.hybridWithDistractors)} |`,
  ];
  return rows.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchCatalog().then(
    (r) => {
      console.log(`\n${reportCatalog(r)}\n`);
      process.exit(0);
    },
    (e: unknown) => {
      console.error(e);
      process.exit(1);
    },
  );
}
