import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FixtureProvider, startFixtureProvider } from '../../test-support/fixture-provider.testing';
import {
  allowProviders,
  CountingEmbedder,
  request,
  startTestCatalog,
  type TestCatalog,
} from '../../test-support/harness.testing';
import { Provider } from '../db/entities';
import { LocalEmbedder } from '../embeddings/local';
import { registerProvider } from '../providers/service';
import type { ProviderInfo } from './catalog-cache';
import type { SearchResponse } from './schemas';
import { attributionFor } from './search';

const CATEGORIES = [{ slug: 'geral', name: 'Geral' }];
let provider: FixtureProvider;
let t: TestCatalog;
const embedder = new CountingEmbedder(new LocalEmbedder());

const info: ProviderInfo = {
  slug: 'p',
  name: 'P',
  kind: 'geo-indica-rest',
  baseUrl: 'http://127.0.0.1:1',
  publisherName: 'Pub',
  publisherUrl: 'https://pub.example/',
  license: 'CC BY 4.0',
  embedderId: null,
};

async function search(query: string): Promise<SearchResponse> {
  const { status, body } = await request<SearchResponse>(`${t.url}/api/search?${query}`);
  expect(status).toBe(200);
  return body;
}

beforeAll(async () => {
  provider = await startFixtureProvider({
    categories: CATEGORIES,
    definitions: [
      ...Array.from({ length: 14 }, (_, i) => ({
        id: `VAC_${i}`,
        name: `Cobertura vacinal ${i}`,
        category: 'geral',
      })),
      {
        id: 'XYZ_1',
        name: 'Indicador de vacinação infantil',
        category: 'geral',
        description: 'cobertura vacinal',
      },
    ],
    pageSize: 100,
  });
  t = await startTestCatalog({
    embedder,
    env: {
      CATALOG_VALUES_TIMEOUT_MS: '1000',
      CATALOG_VALUES_CONCURRENCY: '4',
      CATALOG_PROVIDER_ALLOW_HOSTS: allowProviders(provider.url),
    },
  });
  await registerProvider(
    t.catalog.deps.db.fork(),
    {
      slug: 'fx',
      name: 'Fixture',
      kind: 'geo-indica-rest',
      baseUrl: provider.url,
      publisherName: 'Fixture Publisher',
      publisherUrl: 'https://example.org/',
      license: 'CC BY 4.0',
    },
    t.catalog.deps.egress,
  );
  expect((await t.catalog.deps.sync.run('fx', 'test')).status).toBe('ok');
});
afterAll(async () => {
  await t?.close();
  await provider?.close();
});
beforeEach(() => {
  provider.behavior = () => ({ kind: 'normal' });
});

describe('attribution', () => {
  it('is built from the provider registration and the exact source', () => {
    const at = new Date('2026-01-02T03:04:05Z');
    expect(
      attributionFor(info, {
        sourceUrl: 'http://127.0.0.1:1/indicator-values?indicatorId=X',
        retrievedAt: at,
      }),
    ).toEqual({
      publisherName: 'Pub',
      publisherUrl: 'https://pub.example/',
      license: 'CC BY 4.0',
      provider: { slug: 'p', name: 'P' },
      sourceUrl: 'http://127.0.0.1:1/indicator-values?indicatorId=X',
      retrievedAt: '2026-01-02T03:04:05.000Z',
    });
  });

  it('is refused when any field is blank', () => {
    const source = { sourceUrl: 'http://x', retrievedAt: new Date() };
    for (const field of ['publisherName', 'publisherUrl', 'license', 'name'] as const) {
      expect(attributionFor({ ...info, [field]: ' ' }, source)).toBeUndefined();
    }
    expect(attributionFor(info, { ...source, sourceUrl: '' })).toBeUndefined();
  });

  it('a result without attribution never leaves: it is dropped, the search still answers 200', async () => {
    const em = t.catalog.deps.db.fork();
    // Bypasses validation on purpose: a row damaged outside the API.
    await em.nativeUpdate(Provider, { slug: 'fx' }, { license: '', catalogVersion: 1000 });
    t.catalog.deps.catalog.invalidate();
    try {
      expect((await search('q=vacinal')).results).toEqual([]);
    } finally {
      await em.nativeUpdate(Provider, { slug: 'fx' }, { license: 'CC BY 4.0', catalogVersion: 1001 });
      t.catalog.deps.catalog.invalidate();
    }
    const restored = await search('q=vacinal');
    expect(restored.results.length).toBeGreaterThan(0);
    for (const r of restored.results) expect(r.attribution.license).toBe('CC BY 4.0');
  });
});

describe('ranking', () => {
  it('puts an exact code first, then an exact name, whatever the legs say', async () => {
    expect((await search('q=XYZ_1')).results[0]).toMatchObject({ indicator: { id: 'XYZ_1' }, score: 1 });
    expect((await search('q=vacinal%20XYZ_1')).results[0]?.indicator.id).toBe('XYZ_1');
    expect((await search(`q=${encodeURIComponent('cobertura vacinal 7')}`)).results[0]?.indicator.id).toBe(
      'VAC_7',
    );
  });

  it('falls back to the lexical leg when the query cannot be embedded', async () => {
    embedder.failNext = 1;
    const body = await search(`q=${encodeURIComponent('vacinação infantil')}`);
    expect(body.results[0]?.indicator.id).toBe('XYZ_1');
  });
});

describe('live values', () => {
  it('fetch at most CATALOG_VALUES_CONCURRENCY at a time', async () => {
    let inFlight = 0;
    let peak = 0;
    provider.behavior = (r) => {
      if (r.path !== '/indicator-values') return { kind: 'normal' };
      inFlight++;
      peak = Math.max(peak, inFlight);
      setTimeout(() => inFlight--, 100);
      return { kind: 'delay', ms: 100 };
    };
    const body = await search('q=vacinal&limit=12');
    expect(body.results).toHaveLength(12);
    // Never more than the bound; several at once (the exact peak depends on arrival times under load).
    expect(peak).toBeLessThanOrEqual(4);
    expect(peak).toBeGreaterThanOrEqual(2);
    for (const r of body.results) expect(r.values.map((v) => v.year)).toEqual([2021, 2020, 2019]);
  });

  it('report a provider error or timeout per result', async () => {
    provider.behavior = (r) =>
      r.query.indicatorId === 'VAC_1'
        ? { kind: 'status', status: 500 }
        : r.query.indicatorId === 'VAC_2'
          ? { kind: 'delay', ms: 3000 }
          : { kind: 'normal' };
    const body = await search('q=vacinal&limit=15');
    const byId = new Map(body.results.map((r) => [r.indicator.id, r]));
    expect(byId.get('VAC_1')?.error).toBe('provider answered HTTP 500');
    expect(byId.get('VAC_2')?.error).toBe('provider timed out after 1000 ms');
    expect(byId.get('VAC_2')?.attribution.sourceUrl).toBe(
      `${provider.url}/indicator-values?indicatorId=VAC_2&pageSize=10`,
    );
    expect(byId.get('VAC_3')?.error).toBeUndefined();
    expect(byId.get('VAC_3')?.values).toHaveLength(3);
  });

  it('resolve a city through the provider and filter by year', async () => {
    const body = await search('q=XYZ_1&city=qualquer&year=2020');
    expect(body.municipality).toEqual({ geocode: '3550308', name: 'São Paulo', uf: 'SP' });
    expect(body.results[0]?.values).toEqual([
      { geocode: '3550308', city: 'São Paulo', year: 2020, value: 20, unit: 'u' },
    ]);
    expect((await request(`${t.url}/api/search?q=XYZ_1&city=nowhere`)).status).toBe(404);
  });

  it('report a city the provider cannot resolve (down) on every result', async () => {
    provider.behavior = (r) =>
      r.path === '/ibge/cities' ? { kind: 'status', status: 503 } : { kind: 'normal' };
    const body = await search('q=XYZ_1&city=qualquer&limit=2');
    expect(body.results).toHaveLength(2);
    for (const r of body.results) {
      expect(r.error).toContain('municipality "qualquer" could not be resolved');
      expect(r.attribution.publisherName).toBe('Fixture Publisher');
    }
  });
});
