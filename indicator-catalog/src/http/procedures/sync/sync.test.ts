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

/** The sync router called without HTTP (tRPC's server-side caller over an inner context). */
describe('sync router (createCaller)', () => {
  let dataDir: string;
  let provider: FixtureProvider;
  let catalog: Catalog;
  const slug = 'fixture';
  const admin = () => createCaller(createInnerContext(catalog.deps, { mode: 'open' }));

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
    await admin().providers.register({
      slug,
      name: 'Fixture',
      kind: 'geo-indica-rest',
      baseUrl: provider.url,
      publisherName: 'Fixture publisher',
      publisherUrl: 'https://fixture.example/',
      license: 'CC BY 4.0',
    });
  });
  afterAll(async () => {
    await catalog?.close();
    await provider?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('trigger: closed admin access is UNAUTHORIZED; an unknown provider NOT_FOUND', async () => {
    const closed = createCaller(createInnerContext(catalog.deps, { mode: 'closed' }));
    await expect(closed.sync.trigger({ slug })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(admin().sync.trigger({ slug: 'nobody' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(admin().sync.status({ slug: 'nobody' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('status `never` until a sync; trigger starts one (a second while it runs is CONFLICT); status records it', async () => {
    expect(await admin().sync.status({ slug })).toMatchObject({ status: 'never', recentRuns: [] });
    const started = await admin().sync.trigger({ slug });
    expect(started.status).toBe('running');
    // The sync cannot finish before the provider answers over the network: it is still running here.
    await expect(admin().sync.trigger({ slug })).rejects.toMatchObject({ code: 'CONFLICT' });
    const outcome = await catalog.deps.sync.current(slug)?.done;
    expect(outcome?.status).toBe('ok');
    const status = await admin().sync.status({ slug });
    expect(status).toMatchObject({ status: 'ok', indicatorCount: 2, lastError: null, progress: null });
    expect(status.recentRuns.map((r) => [r.id, r.trigger, r.status])).toEqual([[started.runId, 'api', 'ok']]);
  });
});
