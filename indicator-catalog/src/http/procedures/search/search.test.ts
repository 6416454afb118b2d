import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FixtureProvider,
  startFixtureProvider,
} from '../../../../test-support/fixture-provider.testing';
import { allowProviders } from '../../../../test-support/harness.testing';
import { type Catalog, openCatalog } from '../../../catalog';
import { loadConfig } from '../../../config';
import { createInnerContext } from '../../context';
import { createCaller } from '../../router';

/** The search router called without HTTP (tRPC's server-side caller over an inner context). */
describe('search router (createCaller)', () => {
  let dataDir: string;
  let provider: FixtureProvider;
  let catalog: Catalog;
  const anyone = () => createCaller(createInnerContext(catalog.deps, { mode: 'closed' }));

  beforeAll(async () => {
    provider = await startFixtureProvider({
      categories: [{ slug: 'saude', name: 'Saúde' }],
      definitions: [
        { id: 'MORT_INF', name: 'Taxa de mortalidade infantil', category: 'saude', unit: '‰' },
        { id: 'LEITOS', name: 'Leitos hospitalares por mil habitantes', category: 'saude' },
      ],
    });
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-procedures-'));
    const config = loadConfig({
      NODE_ENV: 'test',
      CATALOG_DATA_DIR: dataDir,
      CATALOG_REFERENCE_PROVIDER: '0',
      CATALOG_ADMIN_OPEN: '1',
      CATALOG_PROVIDER_ALLOW_HOSTS: allowProviders(provider.url),
    });
    catalog = await openCatalog(config, { memory: true });
    const admin = createCaller(createInnerContext(catalog.deps, { mode: 'open' }));
    await admin.providers.register({
      slug: 'fixture',
      name: 'Fixture',
      kind: 'geo-indica-rest',
      baseUrl: provider.url,
      publisherName: 'Fixture publisher',
      publisherUrl: 'https://fixture.example/',
      license: 'CC BY 4.0',
    });
    expect((await catalog.deps.sync.run('fixture', 'test')).status).toBe('ok');
  });
  afterAll(async () => {
    await catalog?.close();
    await provider?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("an exact name ranks first with values fetched live and the attribution of the provider's publisher fields", async () => {
    const ctx = createInnerContext(catalog.deps, { mode: 'closed' });
    const { results, municipality } = await createCaller(ctx).search.search({
      q: 'Taxa de mortalidade infantil',
      geocode: '3550308',
    });
    expect(municipality?.geocode).toBe('3550308');
    const [first] = results;
    expect(first?.indicator).toMatchObject({
      id: 'MORT_INF',
      provider: { slug: 'fixture', name: 'Fixture' },
    });
    expect(first?.score).toBe(1);
    expect(first?.values[0]).toMatchObject({ geocode: '3550308' });
    expect(first?.attribution).toMatchObject({
      publisherName: 'Fixture publisher',
      publisherUrl: 'https://fixture.example/',
      license: 'CC BY 4.0',
      provider: { slug: 'fixture', name: 'Fixture' },
    });
    expect(first?.attribution.sourceUrl.startsWith(provider.url)).toBe(true);
    // The context's timing is what the REST face sends as Server-Timing.
    expect(ctx.timing.total).toBeGreaterThan(0);
  });

  it('invalid input is BAD_REQUEST: an empty query, or both city and geocode', async () => {
    await expect(anyone().search.search({ q: '  ' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(
      anyone().search.search({ q: 'leitos', city: 'São Paulo', geocode: '3550308' }),
    ).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });
});
