import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type FixtureDefinition,
  type FixtureProvider,
  startFixtureProvider,
} from '../../test-support/fixture-provider.testing';
import {
  allowProviders,
  CountingEmbedder,
  request,
  startTestCatalog,
  type TestCatalog,
} from '../../test-support/harness.testing';
import { Indicator, Provider, type SyncProgress } from '../db/entities';
import { LocalEmbedder } from '../embeddings/local';
import type { ProviderView } from '../providers/schemas';
import type { SearchResponse } from '../search/schemas';
import { pointId } from '../vector-index/point-id';
import type { SyncStatusView } from './status';

const SLUG = 'fx';
const CATEGORIES = [
  { slug: 'saude', name: 'Saúde' },
  { slug: 'educacao', name: 'Educação' },
  { slug: 'economia', name: 'Economia' },
];
const initialDefinitions = (): FixtureDefinition[] =>
  Array.from({ length: 30 }, (_, i) => ({
    id: `IND_${i}`,
    name: [`Taxa de vacinação ${i}`, `Escolas da rede ${i}`, `Renda média ${i}`][i % 3] as string,
    category: CATEGORIES[i % 3]?.slug as string,
    unit: '%',
    description: `descrição ${i}`,
  }));

let provider: FixtureProvider;
let t: TestCatalog;
const embedder = new CountingEmbedder(new LocalEmbedder());

async function search(q: string): Promise<SearchResponse> {
  const { status, body } = await request<SearchResponse>(
    `${t.url}/api/search?q=${encodeURIComponent(q)}&limit=50`,
  );
  expect(status).toBe(200);
  return body;
}

async function indexedHashes(): Promise<Map<string, string>> {
  const points = await t.catalog.deps.index.listProvider(SLUG);
  return new Map([...points].map(([id, p]) => [id, p.contentHash]));
}

async function providerRow() {
  return t.catalog.deps.db.fork().findOneOrFail(Provider, { slug: SLUG });
}

beforeAll(async () => {
  provider = await startFixtureProvider({
    categories: CATEGORIES,
    definitions: initialDefinitions(),
    pageSize: 4,
  });
  t = await startTestCatalog({
    embedder,
    env: {
      CATALOG_PROVIDER_TIMEOUT_MS: '1000',
      CATALOG_PROVIDER_RETRIES: '1',
      CATALOG_PROVIDER_ALLOW_HOSTS: allowProviders(provider.url),
    },
  });
  const registered = await request<ProviderView>(`${t.url}/api/providers`, {
    method: 'POST',
    body: {
      slug: SLUG,
      name: 'Fixture',
      kind: 'geo-indica-rest',
      baseUrl: provider.url,
      publisherName: 'Fixture Publisher',
      publisherUrl: 'https://example.org/',
      license: 'CC BY 4.0',
    },
  });
  expect(registered.status).toBe(201);
  expect(registered.body.sync.status).toBe('never');
});
afterAll(async () => {
  await t?.close();
  await provider?.close();
});
beforeEach(() => {
  provider.behavior = () => ({ kind: 'normal' });
  embedder.reset();
});

describe('sync', () => {
  it('first sync: crawls every page, embeds in batches, commits, reports progress in phase order', async () => {
    const phases: SyncProgress['phase'][] = [];
    const unsubscribe = t.catalog.deps.sync.onProgress((slug, p) => {
      if (slug === SLUG && phases[phases.length - 1] !== p.phase) phases.push(p.phase);
    });
    const outcome = await t.catalog.deps.sync.run(SLUG, 'test');
    unsubscribe();
    expect(outcome).toMatchObject({ status: 'ok', error: null });
    expect(outcome.stats).toMatchObject({
      categoriesDone: 3,
      categoriesTotal: 3,
      indicatorsSeen: 30,
      toEmbed: 30,
      embedded: 30,
      upserted: 30,
      removed: 0,
      unchanged: 0,
    });
    expect(phases).toEqual(['crawl', 'diff', 'embed', 'upsert', 'commit', 'cleanup', 'done']);
    expect(embedder.texts).toContain('Taxa de vacinação 0 | Saúde | Fixture Publisher');
    expect(await t.catalog.deps.index.count(SLUG)).toBe(30);
    const row = await providerRow();
    expect(row).toMatchObject({
      syncStatus: 'ok',
      indicatorCount: 30,
      embedderId: embedder.id,
      lastError: null,
    });
    expect(row.lastSyncAt).toBeInstanceOf(Date);
    const found = await search('IND_7');
    expect(found.results[0]?.indicator.id).toBe('IND_7');
  });

  it('re-sync with one definition renamed and one removed: only the renamed one is re-embedded', async () => {
    const renamed = provider.definitions.find((d) => d.id === 'IND_4') as FixtureDefinition;
    renamed.name = 'Cobertura de esgoto sanitário';
    const describedOnly = provider.definitions.find((d) => d.id === 'IND_5') as FixtureDefinition;
    describedOnly.description = 'nova descrição, mesmo nome';
    provider.definitions = provider.definitions.filter((d) => d.id !== 'IND_9');
    const before = await indexedHashes();

    const outcome = await t.catalog.deps.sync.run(SLUG, 'test');
    expect(outcome.status).toBe('ok');
    expect(embedder.texts).toEqual(['Cobertura de esgoto sanitário | Educação | Fixture Publisher']);
    expect(embedder.calls).toBe(1);
    expect(outcome.stats).toMatchObject({ indicatorsSeen: 29, embedded: 1, unchanged: 28, removed: 1 });

    const after = await indexedHashes();
    expect(after.size).toBe(29);
    expect(after.has(pointId(SLUG, 'IND_9'))).toBe(false);
    expect(after.get(pointId(SLUG, 'IND_4'))).not.toBe(before.get(pointId(SLUG, 'IND_4')));
    expect(after.get(pointId(SLUG, 'IND_5'))).toBe(before.get(pointId(SLUG, 'IND_5')));
    const em = t.catalog.deps.db.fork();
    expect(await em.count(Indicator, { provider: SLUG })).toBe(29);
    expect((await em.findOneOrFail(Indicator, { id: pointId(SLUG, 'IND_5') })).description).toBe(
      'nova descrição, mesmo nome',
    );
    expect((await providerRow()).indicatorCount).toBe(29);
    const found = await search('esgoto');
    expect(found.results[0]?.indicator.id).toBe('IND_4');
    expect((await search('IND_9')).results.some((r) => r.indicator.id === 'IND_9')).toBe(false);

    embedder.reset();
    const again = await t.catalog.deps.sync.run(SLUG, 'test');
    expect(again.stats).toMatchObject({ embedded: 0, unchanged: 29, removed: 0 });
    expect(embedder.calls).toBe(0);
  });

  it('a provider that errors mid-sync: status failed, previous index and rows untouched and searchable', async () => {
    const before = await indexedHashes();
    const lastSuccess = (await providerRow()).lastSuccessAt;
    provider.definitions.push({ id: 'IND_NEW', name: 'Indicador novo de saneamento', category: 'economia' });
    provider.definitions = provider.definitions.filter((d) => d.id !== 'IND_0');
    provider.behavior = (r) =>
      r.path === '/indicator-types/economia/indicators' && r.page === 2
        ? { kind: 'status', status: 500 }
        : { kind: 'normal' };

    const outcome = await t.catalog.deps.sync.run(SLUG, 'test');
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toContain('answered HTTP 500');
    expect(outcome.error).toContain('/indicator-types/economia/indicators?page=2');
    expect(embedder.calls).toBe(0);
    expect(await indexedHashes()).toEqual(before);
    const row = await providerRow();
    expect(row).toMatchObject({ syncStatus: 'failed', indicatorCount: 29 });
    expect(row.lastSuccessAt?.getTime()).toBe(lastSuccess?.getTime());
    expect(row.lastError).toContain('HTTP 500');
    const status = await request<SyncStatusView>(`${t.url}/api/providers/${SLUG}/sync`);
    expect(status.body).toMatchObject({ status: 'failed', indicatorCount: 29, progress: null });
    expect(status.body.recentRuns[0]).toMatchObject({ status: 'failed', trigger: 'test' });
    // Still searchable: IND_0 is still in the catalog, the new one is not.
    expect((await search('IND_0')).results[0]?.indicator.id).toBe('IND_0');
    expect((await search('IND_NEW')).results.some((r) => r.indicator.id === 'IND_NEW')).toBe(false);
  });

  it('a provider that times out mid-sync: status failed, previous index untouched', async () => {
    const before = await indexedHashes();
    provider.behavior = (r) =>
      r.path === '/indicator-types/educacao/indicators' ? { kind: 'delay', ms: 3000 } : { kind: 'normal' };
    const outcome = await t.catalog.deps.sync.run(SLUG, 'test');
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toContain('timed out after 1000 ms');
    expect(await indexedHashes()).toEqual(before);
    expect((await providerRow()).syncStatus).toBe('failed');
  });

  it('an embedder failure fails the sync before the index is touched', async () => {
    const before = await indexedHashes();
    embedder.failNext = 1;
    const outcome = await t.catalog.deps.sync.run(SLUG, 'test');
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toContain('embeddings service unavailable');
    expect(await indexedHashes()).toEqual(before);
  });

  it('a page that repeats: partial, new definitions committed, nothing removed', async () => {
    // IND_0 is gone at the provider and IND_NEW is new (previous tests); the saude walk repeats page 1.
    provider.behavior = (r) =>
      r.path === '/indicator-types/saude/indicators' && r.page === 2
        ? { kind: 'page', page: 1 }
        : { kind: 'normal' };
    const outcome = await t.catalog.deps.sync.run(SLUG, 'test');
    expect(outcome.status).toBe('partial');
    expect(outcome.error).toContain('category saude: page 2 repeated page 1');
    expect(outcome.stats.removed).toBe(0);
    const hashes = await indexedHashes();
    expect(hashes.has(pointId(SLUG, 'IND_NEW'))).toBe(true);
    expect(hashes.has(pointId(SLUG, 'IND_0'))).toBe(true);
    expect((await search('IND_NEW')).results[0]?.indicator.id).toBe('IND_NEW');
    expect(await providerRow()).toMatchObject({ syncStatus: 'partial', indicatorCount: 30 });

    // A complete crawl afterwards removes IND_0.
    provider.behavior = () => ({ kind: 'normal' });
    const complete = await t.catalog.deps.sync.run(SLUG, 'test');
    expect(complete).toMatchObject({ status: 'ok', error: null });
    expect(complete.stats.removed).toBe(1);
    expect((await providerRow()).indicatorCount).toBe(29);
  });

  it('progress is visible through the status API while a sync runs; a second trigger is refused (409)', async () => {
    provider.behavior = (r) =>
      r.path === '/indicator-types/educacao/indicators' ? { kind: 'delay', ms: 500 } : { kind: 'normal' };
    const started = await request<{ runId: string; status: string }>(`${t.url}/api/providers/${SLUG}/sync`, {
      method: 'POST',
    });
    expect(started.status).toBe(202);
    expect(started.body.status).toBe('running');
    const second = await request<{ code: string }>(`${t.url}/api/providers/${SLUG}/sync`, { method: 'POST' });
    expect(second.status).toBe(409);
    expect(second.body.code).toBe('CONFLICT');
    const running = await request<SyncStatusView>(`${t.url}/api/providers/${SLUG}/sync`);
    expect(running.body.status).toBe('running');
    expect(running.body.progress).toMatchObject({ phase: 'crawl' });
    const listed = await request<{ providers: ProviderView[] }>(`${t.url}/api/providers`);
    expect(listed.body.providers[0]?.sync.status).toBe('running');
    const outcome = await t.catalog.deps.sync.current(SLUG)?.done;
    expect(outcome?.runId).toBe(started.body.runId);
    expect(outcome?.status).toBe('ok');
    const done = await request<SyncStatusView>(`${t.url}/api/providers/${SLUG}/sync`);
    expect(done.body).toMatchObject({ status: 'ok', progress: null });
    expect(done.body.recentRuns[0]).toMatchObject({ id: started.body.runId, status: 'ok', trigger: 'api' });
  });

  it('between the commit and the run record the provider still reads running: done always comes with its stats', async () => {
    provider.behavior = () => ({ kind: 'normal' });
    const index = t.catalog.deps.index;
    const remove = index.remove.bind(index);
    let cleanupReached!: () => void;
    const reached = new Promise<void>((resolve) => {
      cleanupReached = resolve;
    });
    let releaseCleanup!: () => void;
    const released = new Promise<void>((resolve) => {
      releaseCleanup = resolve;
    });
    index.remove = async (ids) => {
      cleanupReached();
      await released;
      return remove(ids);
    };
    try {
      const started = await request<{ runId: string }>(`${t.url}/api/providers/${SLUG}/sync`, {
        method: 'POST',
      });
      expect(started.status).toBe(202);
      await reached;
      // The definitions are committed; the index cleanup and the run record are not yet done.
      const between = await request<SyncStatusView>(`${t.url}/api/providers/${SLUG}/sync`);
      expect(between.body.status).toBe('running');
      expect(between.body.recentRuns[0]).toMatchObject({
        id: started.body.runId,
        status: 'running',
        stats: null,
      });
      releaseCleanup();
      await t.catalog.deps.sync.current(SLUG)?.done;
      const done = await request<SyncStatusView>(`${t.url}/api/providers/${SLUG}/sync`);
      expect(done.body.status).toBe('ok');
      expect(done.body.recentRuns[0]).toMatchObject({
        id: started.body.runId,
        status: 'ok',
        stats: expect.objectContaining({ indicatorsSeen: 29 }),
      });
    } finally {
      index.remove = remove;
      releaseCleanup();
    }
  });

  it('a sync left running by a stopped catalog is marked failed at the next start', async () => {
    const em = t.catalog.deps.db.fork();
    await em.nativeUpdate(
      Provider,
      { slug: SLUG },
      { syncStatus: 'running', syncHeartbeatAt: new Date(Date.now() - 3_600_000) },
    );
    expect(await t.catalog.deps.sync.recoverInterrupted()).toBe(1);
    expect(await providerRow()).toMatchObject({
      syncStatus: 'failed',
      lastError: expect.stringContaining('interrupted'),
    });
  });
});

describe("a provider's baseUrl key stays out of its sync errors", () => {
  it('every piece of the configured URL is hidden from the outcome, the stored error and the status API', async () => {
    const slug = 'fx-keyed';
    const baseUrl = `${provider.url}/hushkey/s%C3%A9cr%C3%A9t;apikey=mk1`;
    const secrets = ['hushkey', 'sécrét', 's%C3%A9cr%C3%A9t', 'mk1'];
    const registered = await request<ProviderView>(`${t.url}/api/providers`, {
      method: 'POST',
      body: {
        slug,
        name: 'Keyed fixture',
        kind: 'geo-indica-rest',
        baseUrl,
        publisherName: 'Fixture Publisher',
        publisherUrl: 'https://example.org/',
        license: 'CC BY 4.0',
      },
    });
    expect(registered.status).toBe(201);
    // The fixture serves nothing under that path: the provider answers 404 and the sync fails naming the URL.
    const outcome = await t.catalog.deps.sync.run(slug, 'test');
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toContain('answered HTTP 404');
    expect(outcome.error).toContain(`${provider.url}/***/***;apikey=***/indicator-types?page=1`);
    const row = await t.catalog.deps.db.fork().findOneOrFail(Provider, { slug });
    const status = await request<SyncStatusView>(`${t.url}/api/providers/${slug}/sync`);
    const told = [outcome.error ?? '', row.lastError ?? '', JSON.stringify(status.body)].join('\n');
    for (const secret of secrets) expect(told).not.toContain(secret);
  });
});
