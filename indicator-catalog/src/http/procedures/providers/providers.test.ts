import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Catalog, openCatalog } from '../../../catalog';
import { loadConfig } from '../../../config';
import { adminAccessFor } from '../../admin-access';
import { createInnerContext } from '../../context';
import { toAppError } from '../../errors';
import { createCaller } from '../../router';

const TOKEN = 'admin-token-0123456789';
const valid = {
  slug: 'ibge-demo',
  name: 'IBGE demo',
  kind: 'geo-indica-rest',
  // Discard port: nothing listens, and nothing is fetched at registration; allowed explicitly below.
  baseUrl: 'http://127.0.0.1:9/',
  publisherName: 'IBGE',
  publisherUrl: 'https://www.ibge.gov.br/',
  license: 'CC BY 4.0',
};

/** The providers router called without HTTP (tRPC's server-side caller over an inner context). */
describe('providers router (createCaller)', () => {
  let dataDir: string;
  let catalog: Catalog;
  const as = (bearer: string | null) =>
    createCaller(
      createInnerContext(catalog.deps, adminAccessFor(catalog.deps.config, '127.0.0.1'), { bearer }),
    );

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'catalog-procedures-'));
    const config = loadConfig({
      NODE_ENV: 'test',
      CATALOG_DATA_DIR: dataDir,
      CATALOG_REFERENCE_PROVIDER: '0',
      CATALOG_ADMIN_TOKEN: TOKEN,
      CATALOG_PROVIDER_ALLOW_HOSTS: '127.0.0.1:9',
    });
    catalog = await openCatalog(config, { memory: true });
  });
  afterAll(async () => {
    await catalog?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('register needs the admin token: none or a wrong one is UNAUTHORIZED, and nothing is registered', async () => {
    for (const bearer of [null, 'wrong-token-0123456789']) {
      await expect(as(bearer).providers.register({ ...valid, slug: 'intruder' })).rejects.toMatchObject({
        code: 'UNAUTHORIZED',
        cause: { code: 'UNAUTHENTICATED' },
      });
    }
    await expect(as(null).providers.get({ slug: 'intruder' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('registers (sync `never`), reads it back without a token, and refuses the same slug again (CONFLICT)', async () => {
    const created = await as(TOKEN).providers.register(valid);
    expect(created).toMatchObject({
      ...valid,
      sync: { status: 'never', indicatorCount: 0, lastError: null },
    });
    expect(await as(null).providers.get({ slug: valid.slug })).toEqual(created);
    expect((await as(null).providers.list({})).providers.map((p) => p.slug)).toContain(valid.slug);
    await expect(as(TOKEN).providers.register(valid)).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('names every missing field, and refuses a baseUrl on a private address', async () => {
    const missing = await as(TOKEN)
      .providers.register({ slug: 'only-slug' } as typeof valid)
      .catch((e: unknown) => e);
    expect(toAppError(missing)).toMatchObject({
      code: 'BAD_REQUEST',
      fields: ['name', 'kind', 'baseUrl', 'publisherName', 'publisherUrl', 'license'],
    });
    await expect(
      as(TOKEN).providers.register({ ...valid, slug: 'private', baseUrl: 'http://10.0.0.1/' }),
    ).rejects.toMatchObject({ code: 'BAD_REQUEST', cause: { fields: ['baseUrl'] } });
  });
});
