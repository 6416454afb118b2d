import { parseAllowList } from '@notary/platform/net/address-policy';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FixtureProvider, startFixtureProvider } from '../../test-support/fixture-provider.testing';
import { allowProviders } from '../../test-support/harness.testing';
import { ProviderEgress } from './egress';
import { GeoIndicaRestConnector } from './geo-indica-rest';
import { ProviderError } from './http-client';
import { walkPages } from './paginate';

let provider: FixtureProvider;
let egress: ProviderEgress;
const definitions = Array.from({ length: 23 }, (_, i) => ({
  id: `D${i}`,
  name: `Definição ${i}`,
  category: i < 20 ? 'a' : 'b',
}));

const connector = (overrides: Partial<{ timeoutMs: number; retries: number; maxPages: number }> = {}) =>
  new GeoIndicaRestConnector(provider.url, {
    timeoutMs: 2000,
    retries: 2,
    maxPages: 100,
    egress,
    ...overrides,
  });

beforeAll(async () => {
  provider = await startFixtureProvider({
    categories: [
      { slug: 'a', name: 'Categoria A' },
      { slug: 'b', name: 'Categoria B' },
      { slug: 'empty', name: 'Vazia' },
    ],
    definitions,
    pageSize: 5,
  });
  // The fixture provider is on loopback: allowed by its exact address.
  egress = new ProviderEgress(parseAllowList(allowProviders(provider.url)));
});
afterAll(async () => {
  await egress.close();
  await provider.close();
});
beforeEach(() => {
  provider.behavior = () => ({ kind: 'normal' });
  provider.requests.length = 0;
});

describe('pagination walk', () => {
  it('walks every page up to totalPages', async () => {
    const walk = await connector().indicators('a');
    expect(walk).toMatchObject({ complete: true, pages: 4 });
    expect(walk.items.map((d) => d.id)).toEqual(definitions.slice(0, 20).map((d) => d.id));
  });

  it('totalPages 0 with an empty page is a complete, empty list', async () => {
    expect(await connector().indicators('empty')).toEqual({ items: [], pages: 1, complete: true });
  });

  it('stops at the first empty page when totalPages is huge', async () => {
    provider.behavior = () => ({ kind: 'totalPages', totalPages: 1_000_000_000 });
    const walk = await connector().indicators('a');
    expect(walk.complete).toBe(true);
    expect(walk.items).toHaveLength(20);
    expect(walk.pages).toBe(5);
  });

  it('stops, incomplete, when a page repeats an earlier one (a provider that ignores `page`)', async () => {
    provider.behavior = (r) => (r.page >= 3 ? { kind: 'page', page: 1 } : { kind: 'normal' });
    const walk = await connector().indicators('a');
    expect(walk.complete).toBe(false);
    expect(walk.stopReason).toBe('page 3 repeated page 1');
    expect(walk.items).toHaveLength(10);
    expect(provider.requests.map((r) => r.page)).toEqual([1, 2, 3]);
  });

  it('stops, incomplete, at the page limit', async () => {
    const walk = await connector({ maxPages: 2 }).indicators('a');
    expect(walk).toMatchObject({ complete: false, pages: 2 });
    expect(walk.stopReason).toMatch(/page limit/);
  });

  it('walkPages propagates a failing page', async () => {
    await expect(
      walkPages(
        async (page) => {
          if (page === 2) throw new Error('boom');
          return { data: [1], pagination: { page, totalPages: 3 } };
        },
        { maxPages: 10 },
      ),
    ).rejects.toThrow('boom');
  });
});

describe('provider HTTP client', () => {
  it('retries 5xx with backoff, then succeeds', async () => {
    let failures = 2;
    provider.behavior = () => (failures-- > 0 ? { kind: 'status', status: 503 } : { kind: 'normal' });
    const walk = await connector().categories();
    expect(walk.items.map((c) => c.slug)).toEqual(['a', 'b', 'empty']);
    expect(provider.requests).toHaveLength(3);
  });

  it('gives up after its retries with a ProviderError naming the URL and status', async () => {
    provider.behavior = () => ({ kind: 'status', status: 500 });
    const error = await connector({ retries: 1 })
      .categories()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).status).toBe(500);
    expect((error as ProviderError).url).toBe(`${provider.url}/indicator-types?page=1`);
    expect(provider.requests).toHaveLength(2);
  });

  it('does not retry a 404', async () => {
    provider.behavior = () => ({ kind: 'status', status: 404 });
    await expect(connector().categories()).rejects.toThrow('answered HTTP 404');
    expect(provider.requests).toHaveLength(1);
  });

  it('times out a slow answer', async () => {
    provider.behavior = () => ({ kind: 'delay', ms: 1000 });
    await expect(connector({ timeoutMs: 100, retries: 0 }).categories()).rejects.toThrow(
      'timed out after 100 ms',
    );
  });

  it('rejects an answer that breaks the contract', async () => {
    provider.behavior = () => ({
      kind: 'body',
      body: { data: [{ slug: 'x' }], pagination: { page: 1, totalPages: 1 } },
    });
    await expect(connector().categories()).rejects.toThrow(/breaks the contract \(data\.0\.name/);
    provider.behavior = () => ({ kind: 'body', body: [] });
    await expect(connector().categories()).rejects.toThrow(/breaks the contract/);
  });

  it('fetches values and resolves cities, keeping the exact source URL', async () => {
    const values = await connector().valuesByGeocode('3550308', {
      indicatorId: 'D1',
      category: 'a',
      year: 2020,
      limit: 5,
    });
    expect(values.values).toEqual([
      {
        indicatorId: 'D1',
        geocode: '3550308',
        city: 'São Paulo',
        uf: undefined,
        year: 2020,
        value: 20,
        unit: 'u',
      },
    ]);
    expect(values.sourceUrl).toBe(
      `${provider.url}/indicators/by-geocode/3550308?type=a&indicator=D1&year=2020&pageSize=5`,
    );
    const series = await connector().valueSeries('D1', { limit: 2 });
    expect(series.values.map((v) => v.year)).toEqual([2021, 2020]);
    expect((await connector().resolveCity('sp')).cities[0]?.geocode).toBe('3550308');
    expect((await connector().resolveCity('nowhere')).cities).toEqual([]);
  });
});
