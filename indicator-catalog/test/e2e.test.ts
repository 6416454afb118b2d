import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceProviderRegistration } from '../reference-provider/src/registration';
import { type RunningProvider, startReferenceProvider } from '../reference-provider/src/server';
import { bootstrap } from '../src/bootstrap';
import type { ProviderView } from '../src/providers/schemas';
import type { SearchResponse } from '../src/search/schemas';
import type { SyncStatusView } from '../src/sync/status';
import { allowProviders, request, startTestCatalog, type TestCatalog } from '../test-support/harness.testing';
import { type OpenAIServer, startOpenAIServer } from '../test-support/openai-server.testing';
import { type QdrantServer, startQdrantServer } from '../test-support/qdrant-server.testing';

/**
 * Sync and search end to end: the reference provider over the real IBGE data, the catalog over HTTP, the real `openai`
 * client against a loopback OpenAI-compatible server and the real Qdrant client against a loopback Qdrant API; then the
 * embedded defaults (local embedder, embedded index, PGlite on disk) across a restart.
 */

/** Population of `geocode` in `year`, read straight from the CSV (independent of the provider's code). */
function population(geocode: string, year: number): number {
  const csv = gunzipSync(
    readFileSync(new URL('../reference-provider/data/populacao-estimada-2012-2021.csv.gz', import.meta.url)),
  ).toString('utf8');
  const line = csv.split('\n').find((l) => l.startsWith(`${geocode},`) && l.split(',')[3] === String(year));
  return Number(line?.split(',')[4]);
}

let provider: RunningProvider;
beforeAll(async () => {
  provider = await startReferenceProvider({ host: '127.0.0.1', port: 0 });
});
afterAll(() => provider?.close());

async function waitForSync(url: string, slug: string): Promise<SyncStatusView> {
  for (let i = 0; i < 600; i++) {
    const { body } = await request<SyncStatusView>(`${url}/api/providers/${slug}/sync`);
    if (body.status !== 'running') return body;
    await sleep(50);
  }
  throw new Error('sync did not finish');
}

describe('catalog with the OpenAI-compatible embedder and Qdrant (real clients, loopback servers)', () => {
  let openai: OpenAIServer;
  let qdrant: QdrantServer;
  let t: TestCatalog;
  /** A second reference provider, stopped by the test that needs a provider that is down. */
  let down: RunningProvider;
  const slug = referenceProviderRegistration('').slug;

  beforeAll(async () => {
    openai = await startOpenAIServer();
    qdrant = await startQdrantServer();
    down = await startReferenceProvider({ host: '127.0.0.1', port: 0 });
    t = await startTestCatalog({
      env: {
        OPENAI_API_KEY: openai.apiKey,
        OPENAI_BASE_URL: openai.baseUrl,
        QDRANT_URL: qdrant.url,
        QDRANT_COLLECTION: 'e2e_indicators',
        CATALOG_PROVIDER_ALLOW_HOSTS: allowProviders(provider.url, down.url),
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await down?.close();
    await openai?.close();
    await qdrant?.close();
  });

  it('registers and syncs the reference provider through the REST API', async () => {
    expect(t.catalog.deps.embedder.id).toBe('openai:text-embedding-3-small:1536');
    expect(t.catalog.deps.index.kind).toBe('qdrant');
    const registered = await request<ProviderView>(`${t.url}/api/providers`, {
      method: 'POST',
      body: referenceProviderRegistration(provider.url),
    });
    expect(registered.status).toBe(201);
    const triggered = await request(`${t.url}/api/providers/${slug}/sync`, { method: 'POST' });
    expect(triggered.status).toBe(202);
    const status = await waitForSync(t.url, slug);
    expect(status).toMatchObject({ status: 'ok', indicatorCount: 102, lastError: null });
    expect(status.recentRuns[0]?.stats).toMatchObject({
      categoriesTotal: 11,
      indicatorsSeen: 102,
      embedded: 102,
    });

    // The openai client asked for base64 and 1536 dimensions, in batches.
    expect(openai.stats.inputs).toBe(102);
    expect(new Set(openai.stats.encodings)).toEqual(new Set(['base64']));
    expect(new Set(openai.stats.dimensions)).toEqual(new Set([1536]));
    // Qdrant holds one point per definition, created with the Query API's collection settings.
    const collection = qdrant.collections.get('e2e_indicators');
    expect(collection?.points.size).toBe(102);
    expect(collection?.distance).toBe('Cosine');
    expect([...(collection?.points.values() ?? [])][0]?.payload).toMatchObject({ providerSlug: slug });
  });

  it('searches with a fuzzy city: values live from the provider, the attribution block, best first', async () => {
    const { status, body, headers } = await request<SearchResponse>(
      `${t.url}/api/search?q=${encodeURIComponent('população residente')}&city=${encodeURIComponent('Sao Paolo')}&limit=5`,
    );
    expect(status).toBe(200);
    expect(headers.get('server-timing')).toMatch(
      /rank;dur=[\d.]+, city;dur=[\d.]+, values;dur=[\d.]+, total;dur=[\d.]+/,
    );
    expect(body.municipality).toEqual({ geocode: '3550308', name: 'São Paulo', uf: 'SP' });
    const first = body.results[0];
    expect(first?.indicator).toMatchObject({
      id: 'POP_EST',
      name: 'População residente estimada',
      category: { slug: 'demografia', name: 'Demografia' },
      provider: { slug, name: 'Indicadores municipais IBGE (provedor de referência)' },
    });
    expect(first?.values[0]).toEqual({
      geocode: '3550308',
      city: 'São Paulo',
      year: 2021,
      value: population('3550308', 2021),
      unit: 'pessoas',
    });
    expect(first?.values.map((v) => v.year)).toEqual([
      2021, 2020, 2019, 2018, 2017, 2016, 2015, 2014, 2013, 2012,
    ]);
    expect(first?.attribution).toMatchObject({
      publisherName: 'IBGE, dados tratados por Álvaro Justen/Brasil.IO',
      publisherUrl: 'https://brasil.io/',
      license: 'CC BY-SA 4.0',
      provider: { slug },
    });
    // The source URL is the exact provider URL the values came from.
    const sourceUrl = first?.attribution.sourceUrl ?? '';
    expect(sourceUrl.startsWith(`${provider.url}/indicators/by-geocode/3550308?`)).toBe(true);
    const direct = await request<{ data: { year: number; value: number }[] }>(sourceUrl);
    expect(direct.body.data.map((v) => [v.year, v.value])).toEqual(
      first?.values.map((v) => [v.year, v.value]),
    );
    expect(Date.now() - Date.parse(first?.attribution.retrievedAt ?? '')).toBeLessThan(60_000);
    expect(body.results.length).toBeGreaterThan(1);
    for (const r of body.results) expect(r.attribution.license).toBe('CC BY-SA 4.0');
  });

  it('filters by geocode and year; computed values match the population series', async () => {
    const curitiba = '4106902';
    const { body } = await request<SearchResponse>(
      `${t.url}/api/search?q=${encodeURIComponent('taxa de crescimento populacional')}&geocode=${curitiba}&year=2015&limit=3`,
    );
    const growth = body.results.find((r) => r.indicator.id === 'POP_CRESC_ANUAL');
    const expected =
      Math.round((population(curitiba, 2015) / population(curitiba, 2014) - 1) * 100 * 10_000) / 10_000;
    expect(growth?.values).toEqual([
      { geocode: curitiba, city: 'Curitiba', year: 2015, value: expected, unit: '% ao ano' },
    ]);
    expect(body.municipality).toEqual({ geocode: curitiba, name: 'Curitiba', uf: null });
  });

  it('an exact code ranks first; a definition without values answers an empty list, not an error', async () => {
    const { body } = await request<SearchResponse>(`${t.url}/api/search?q=SAU_MORT_INF&city=Recife`);
    expect(body.results[0]?.indicator.id).toBe('SAU_MORT_INF');
    expect(body.results[0]?.score).toBe(1);
    expect(body.results[0]?.values).toEqual([]);
    expect(body.results[0]?.error).toBeUndefined();
    const byName = await request<SearchResponse>(
      `${t.url}/api/search?q=${encodeURIComponent('Taxa de urbanização')}`,
    );
    expect(byName.body.results[0]?.indicator.id).toBe('DEM_URB');
  });

  it('rejects bad queries (400) and an unknown municipality (404)', async () => {
    expect((await request(`${t.url}/api/search?q=pib&limit=51`)).status).toBe(400);
    expect((await request(`${t.url}/api/search?q=pib&geocode=123`)).status).toBe(400);
    expect((await request(`${t.url}/api/search?limit=3`)).status).toBe(400);
    const unknown = await request<{ code: string; message: string }>(
      `${t.url}/api/search?q=pib&city=Xyzzyqwv`,
    );
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toContain('Xyzzyqwv');
  });

  it('a provider that is down is reported per result, never as a failed search', async () => {
    await request(`${t.url}/api/providers/${slug}`, { method: 'PATCH', body: { baseUrl: down.url } });
    await down.close();
    const { status, body } = await request<SearchResponse>(
      `${t.url}/api/search?q=populacao&geocode=3550308&limit=3`,
    );
    expect(status).toBe(200);
    expect(body.results).toHaveLength(3);
    for (const r of body.results) {
      expect(r.error).toMatch(/unreachable/);
      expect(r.values).toEqual([]);
      expect(r.attribution.sourceUrl.startsWith(`${down.url}/indicators/by-geocode/3550308`)).toBe(true);
    }
    await request(`${t.url}/api/providers/${slug}`, { method: 'PATCH', body: { baseUrl: provider.url } });
  });
});

describe('catalog on the embedded defaults (local embedder, embedded index, PGlite on disk)', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-e2e-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('registers and syncs the reference provider on first start, and keeps everything across a restart', async () => {
    const env = { CATALOG_PROVIDER_ALLOW_HOSTS: allowProviders(provider.url) };
    const first = await startTestCatalog({ dataDir, memory: false, env });
    first.catalog.deps.readiness = { status: 'starting' };
    expect((await request(`${first.url}/health`)).status).toBe(503);
    const abort = new AbortController();
    await bootstrap(first.catalog.deps, { referenceUrl: provider.url, signal: abort.signal });
    expect(await request(`${first.url}/health`)).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(first.catalog.deps.embedder.id).toBe('local-hash-v1:1536');
    expect(first.catalog.deps.index.kind).toBe('embedded');
    const search = await request<SearchResponse>(
      `${first.url}/api/search?q=quantas%20pessoas%20moram&city=Belo%20Horizonte`,
    );
    expect(search.body.results[0]?.indicator.id).toBe('POP_EST');
    expect(search.body.results[0]?.values[0]).toMatchObject({ city: 'Belo Horizonte', year: 2021 });
    await first.close({ keepData: true });

    // Restart: the provider, its sync records and the vector index are read back from the data directory.
    const second = await startTestCatalog({ dataDir, memory: false, env });
    try {
      expect(await second.catalog.deps.index.count()).toBe(102);
      const status = await request<SyncStatusView>(`${second.url}/api/providers/ibge-referencia/sync`);
      expect(status.body).toMatchObject({ status: 'ok', indicatorCount: 102 });
      expect(status.body.recentRuns).toHaveLength(1);
      const again = await request<SearchResponse>(`${second.url}/api/search?q=densidade%20demografica`);
      expect(again.body.results[0]?.indicator.id).toBe('DEM_DENS');
      // The start-up sync of a known provider re-embeds nothing.
      await bootstrap(second.catalog.deps, {
        referenceUrl: provider.url,
        signal: new AbortController().signal,
      });
      const rerun = await request<SyncStatusView>(`${second.url}/api/providers/ibge-referencia/sync`);
      expect(rerun.body.recentRuns[0]?.stats).toMatchObject({ embedded: 0, unchanged: 102, removed: 0 });
    } finally {
      await second.close({ keepData: true });
    }
  });
});
