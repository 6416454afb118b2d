import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request, startTestCatalog, type TestCatalog } from '../../test-support/harness.testing';
import type { ProviderView } from '../providers/schemas';

const TOKEN = 'admin-token-0123456789';
const valid = {
  slug: 'ibge-demo',
  name: 'IBGE demo',
  kind: 'geo-indica-rest',
  baseUrl: 'http://127.0.0.1:9/',
  publisherName: 'IBGE',
  publisherUrl: 'https://www.ibge.gov.br/',
  license: 'CC BY 4.0',
};

let t: TestCatalog;
beforeAll(async () => {
  // `valid` points at 127.0.0.1:9 (discard: nothing listens), allowed explicitly.
  t = await startTestCatalog({
    env: { CATALOG_ADMIN_TOKEN: TOKEN, CATALOG_PROVIDER_ALLOW_HOSTS: '127.0.0.1:9' },
  });
});
afterAll(() => t?.close());

describe('provider registration', () => {
  it('answers 400 naming every missing field (REST)', async () => {
    const { status, body } = await request<{ message: string; code: string; fields: string[] }>(
      `${t.url}/api/providers`,
      {
        method: 'POST',
        token: TOKEN,
        body: { slug: 'x', name: '  ', publisherUrl: 'not a url' },
      },
    );
    expect(status).toBe(400);
    expect(body.code).toBe('BAD_REQUEST');
    expect(body.message).toBe(
      'Missing required fields: name, kind, baseUrl, publisherName, license; invalid fields: publisherUrl (must be an http(s) URL)',
    );
    expect(body.fields).toEqual(['name', 'kind', 'baseUrl', 'publisherName', 'license', 'publisherUrl']);
  });

  it('answers 400 for an empty body, an unknown kind and a bad slug', async () => {
    const empty = await request<{ fields: string[] }>(`${t.url}/api/providers`, {
      method: 'POST',
      token: TOKEN,
      body: {},
    });
    expect(empty.status).toBe(400);
    expect(empty.body.fields).toEqual([
      'slug',
      'name',
      'kind',
      'baseUrl',
      'publisherName',
      'publisherUrl',
      'license',
    ]);
    const kind = await request<{ message: string }>(`${t.url}/api/providers`, {
      method: 'POST',
      token: TOKEN,
      body: { ...valid, kind: 'ckan', slug: 'Bad Slug' },
    });
    expect(kind.status).toBe(400);
    expect(kind.body.message).toContain('slug (lower-case letters');
    expect(kind.body.message).toContain('kind (unknown kind; known: geo-indica-rest)');
  });

  it('names the missing fields through tRPC too', async () => {
    const response = await fetch(`${t.url}/trpc/providers.register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ slug: 'only-slug' }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as {
      error: { message: string; data: { code: string; fields: string[] } };
    };
    expect(body.error.message).toMatch(
      /^Missing required fields: name, kind, baseUrl, publisherName, publisherUrl, license$/,
    );
    expect(body.error.data.code).toBe('BAD_REQUEST');
  });

  it('needs the admin token when one is configured (401)', async () => {
    const { status, body } = await request<{ code: string }>(`${t.url}/api/providers`, {
      method: 'POST',
      body: valid,
    });
    expect(status).toBe(401);
    expect(body.code).toBe('UNAUTHENTICATED');
    expect(
      (
        await request(`${t.url}/api/providers`, {
          method: 'POST',
          body: valid,
          token: 'wrong-token-0123456789',
        })
      ).status,
    ).toBe(401);
  });

  it('registers (201), lists, gets, updates, refuses a duplicate (409) and removes', async () => {
    const created = await request<ProviderView>(`${t.url}/api/providers`, {
      method: 'POST',
      token: TOKEN,
      body: valid,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      ...valid,
      sync: {
        status: 'never',
        lastSyncAt: null,
        lastSuccessAt: null,
        indicatorCount: 0,
        lastError: null,
        progress: null,
      },
    });
    const again = await request<{ code: string }>(`${t.url}/api/providers`, {
      method: 'POST',
      token: TOKEN,
      body: valid,
    });
    expect(again.status).toBe(409);
    const listed = await request<{ providers: ProviderView[] }>(`${t.url}/api/providers`);
    expect(listed.body.providers.map((p) => p.slug)).toEqual(['ibge-demo']);
    const updated = await request<ProviderView>(`${t.url}/api/providers/ibge-demo`, {
      method: 'PATCH',
      token: TOKEN,
      body: { license: 'CC BY-SA 4.0' },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.license).toBe('CC BY-SA 4.0');
    const badUpdate = await request(`${t.url}/api/providers/ibge-demo`, {
      method: 'PATCH',
      token: TOKEN,
      body: { baseUrl: 'x' },
    });
    expect(badUpdate.status).toBe(400);
    expect((await request<ProviderView>(`${t.url}/api/providers/ibge-demo`)).body.license).toBe(
      'CC BY-SA 4.0',
    );
    expect(
      (await request(`${t.url}/api/providers/ibge-demo`, { method: 'DELETE', token: TOKEN })).body,
    ).toEqual({
      removed: 'ibge-demo',
    });
    expect((await request(`${t.url}/api/providers/ibge-demo`)).status).toBe(404);
    expect((await request(`${t.url}/api/providers/nope/sync`, { method: 'POST', token: TOKEN })).status).toBe(
      404,
    );
  });

  it('a sync of an unreachable provider fails and says why', async () => {
    await request(`${t.url}/api/providers`, {
      method: 'POST',
      token: TOKEN,
      body: { ...valid, slug: 'unreachable' },
    });
    const outcome = await t.catalog.deps.sync.run('unreachable', 'test');
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatch(/unreachable|ECONNREFUSED|fetch failed/);
  });
});

describe('service surface', () => {
  it('serves the OpenAPI 3.1 document with every route', async () => {
    const { status, body } = await request<{
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
    }>(`${t.url}/api/openapi.json`);
    expect(status).toBe(200);
    expect(body.openapi).toBe('3.1.0');
    expect(
      Object.fromEntries(Object.entries(body.paths).map(([p, ops]) => [p, Object.keys(ops).sort()])),
    ).toEqual({
      '/health': ['get'],
      '/api/providers': ['get', 'post'],
      '/api/providers/{slug}': ['delete', 'get', 'patch'],
      '/api/providers/{slug}/sync': ['get', 'post'],
      '/api/search': ['get'],
    });
    // Each operation lists the success status the REST face answers.
    const statuses = (path: string, method: string) =>
      Object.keys(
        (body.paths[path]?.[method] as { responses?: Record<string, unknown> } | undefined)?.responses ?? {},
      );
    expect(statuses('/api/providers', 'post')).toContain('201');
    expect(statuses('/api/providers', 'post')).not.toContain('200');
    expect(statuses('/api/providers/{slug}/sync', 'post')).toContain('202');
    expect(statuses('/api/providers', 'get')).toContain('200');
  });

  it('answers /health 503 until ready, then {status:"ok"}', async () => {
    t.catalog.deps.readiness = { status: 'starting' };
    expect(await request(`${t.url}/health`)).toMatchObject({ status: 503, body: { status: 'starting' } });
    t.catalog.deps.readiness = { status: 'ok' };
    expect(await request(`${t.url}/health`)).toMatchObject({ status: 200, body: { status: 'ok' } });
  });

  it('answers unknown routes and malformed JSON with the error body', async () => {
    expect(await request(`${t.url}/api/nope`)).toMatchObject({ status: 404, body: { code: 'NOT_FOUND' } });
    const malformed = await fetch(`${t.url}/api/providers`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: '{',
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ message: 'Malformed request body', code: 'BAD_REQUEST' });
  });
});
