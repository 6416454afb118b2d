import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../test/harness/postgres';
import { registerProvider } from '../src/providers/service';
import type { SearchResponse } from '../src/search/schemas';
import type { SyncStatusView } from '../src/sync/status';
import { type FixtureProvider, startFixtureProvider } from '../test-support/fixture-provider.testing';
import { allowProviders, request, startTestCatalog, type TestCatalog } from '../test-support/harness.testing';
import { type QdrantServer, startQdrantServer } from '../test-support/qdrant-server.testing';

/**
 * The production shape: two catalog instances on one PostgreSQL database (the machine's, a throwaway
 * database) and one Qdrant. Migrations run once under the advisory lock; a sync claimed by one instance is
 * refused by the other; what one commits, the other searches.
 */
let db: { url: string; drop(): Promise<void> };
let qdrant: QdrantServer;
let provider: FixtureProvider;
let a: TestCatalog;
let b: TestCatalog;

beforeAll(async () => {
  db = await createTestDatabase();
  qdrant = await startQdrantServer();
  provider = await startFixtureProvider({
    categories: [{ slug: 'saude', name: 'Saúde' }],
    definitions: [
      { id: 'LEITOS', name: 'Leitos hospitalares por mil habitantes', category: 'saude' },
      { id: 'VACINA', name: 'Cobertura vacinal da poliomielite', category: 'saude' },
    ],
  });
  const env = {
    CATALOG_DATABASE_URL: db.url,
    QDRANT_URL: qdrant.url,
    QDRANT_COLLECTION: 'pg_test',
    CATALOG_PROVIDER_ALLOW_HOSTS: allowProviders(provider.url),
  };
  [a, b] = await Promise.all([startTestCatalog({ env }), startTestCatalog({ env })]);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await provider?.close();
  await qdrant?.close();
  await db?.drop();
});

describe('two instances on PostgreSQL and Qdrant', () => {
  it('share providers, sync claims and the index', async () => {
    expect(a.catalog.deps.db.kind).toBe('postgresql');
    await registerProvider(
      a.catalog.deps.db.fork(),
      {
        slug: 'fx',
        name: 'Fixture',
        kind: 'geo-indica-rest',
        baseUrl: provider.url,
        publisherName: 'Fixture Publisher',
        publisherUrl: 'https://example.org/',
        license: 'CC BY 4.0',
      },
      a.catalog.deps.egress,
    );
    provider.behavior = (r) =>
      r.path.endsWith('/indicators') ? { kind: 'delay', ms: 500 } : { kind: 'normal' };
    const started = await request(`${a.url}/api/providers/fx/sync`, { method: 'POST' });
    expect(started.status).toBe(202);
    expect((await request(`${b.url}/api/providers/fx/sync`, { method: 'POST' })).status).toBe(409);
    const outcome = await a.catalog.deps.sync.current('fx')?.done;
    expect(outcome?.status).toBe('ok');

    const status = await request<SyncStatusView>(`${b.url}/api/providers/fx/sync`);
    expect(status.body).toMatchObject({ status: 'ok', indicatorCount: 2 });
    const found = await request<SearchResponse>(
      `${b.url}/api/search?q=${encodeURIComponent('vacinação polio')}`,
    );
    expect(found.body.results[0]?.indicator.id).toBe('VACINA');
    expect(found.body.results[0]?.values).toHaveLength(3);
    expect(found.body.results[0]?.attribution.publisherName).toBe('Fixture Publisher');
  });
});
