import http from 'node:http';
import { isLoopbackHost } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FixtureProvider, startFixtureProvider } from '../../test-support/fixture-provider.testing';
import {
  allowProviders,
  request,
  startTestCatalog,
  type TestCatalog,
} from '../../test-support/harness.testing';
import type { ProviderView } from '../providers/schemas';
import type { SearchResponse } from '../search/schemas';
import type { SyncStatusView } from '../sync/status';
import { adminAccessFor, adminAllowed } from './admin-access';
import { startHttp } from './server';

/** The catalog in front of the network: admin access, Host header, OpenAPI servers, /trpc masking, provider egress. */

const TOKEN = 'admin-token-0123456789abcdef';
const registration = (slug: string, baseUrl: string) => ({
  slug,
  name: `Provider ${slug}`,
  kind: 'geo-indica-rest',
  baseUrl,
  publisherName: 'Publisher',
  publisherUrl: 'https://example.org/',
  license: 'CC BY 4.0',
});

/** A raw HTTP/1.1 request with a chosen `Host` header (fetch cannot set one); `null` sends none. */
function withHost(
  url: string,
  host: string | null,
  init: { method?: string; body?: unknown } = {},
): Promise<{ status: number; body: unknown }> {
  const u = new URL(url);
  const payload = init.body === undefined ? undefined : JSON.stringify(init.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: `${u.pathname}${u.search}`,
        method: init.method ?? 'GET',
        setHost: false,
        headers: {
          ...(host === null ? {} : { host }),
          ...(payload ? { 'content-type': 'application/json' } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          text += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

describe('admin access', () => {
  it('is decided from the token, CATALOG_ADMIN_OPEN and whether the listen is loopback only', () => {
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', '[::1]', 'localhost', 'LOCALHOST']) {
      expect(isLoopbackHost(host), host).toBe(true);
      expect(adminAccessFor({ adminToken: undefined, adminOpen: true }, host)).toEqual({ mode: 'open' });
      expect(adminAccessFor({ adminToken: undefined, adminOpen: false }, host)).toEqual({ mode: 'closed' });
    }
    for (const host of [
      '0.0.0.0',
      '::',
      '192.168.1.10',
      '10.0.0.1',
      'catalog.example.org',
      '::ffff:10.0.0.1',
    ]) {
      expect(isLoopbackHost(host), host).toBe(false);
      for (const adminOpen of [false, true]) {
        expect(() => adminAccessFor({ adminToken: undefined, adminOpen }, host)).toThrow(
          /beyond loopback, without CATALOG_ADMIN_TOKEN: set CATALOG_ADMIN_TOKEN/,
        );
      }
      expect(adminAccessFor({ adminToken: TOKEN, adminOpen: true }, host)).toEqual({
        mode: 'token',
        token: TOKEN,
      });
    }
  });

  it('compares the token exactly: none, another, a prefix, an extension are refused', () => {
    const access = adminAccessFor({ adminToken: TOKEN, adminOpen: true }, '127.0.0.1');
    expect(adminAllowed(access, TOKEN)).toBe(true);
    for (const bearer of [null, '', 'x', TOKEN.slice(0, -1), `${TOKEN}x`, TOKEN.toUpperCase()]) {
      expect(adminAllowed(access, bearer)).toBe(false);
    }
    expect(adminAllowed({ mode: 'closed' }, TOKEN)).toBe(false);
  });

  it('the HTTP face refuses to start beyond loopback without a token, before listening', async () => {
    const t = await startTestCatalog({ env: { CATALOG_ADMIN_OPEN: '1' } });
    try {
      await expect(startHttp(t.catalog.deps, '0.0.0.0', 0)).rejects.toThrow(/CATALOG_ADMIN_TOKEN/);
    } finally {
      await t.close();
    }
  });

  describe('with CATALOG_ADMIN_TOKEN (and CATALOG_ADMIN_OPEN=1, which a token overrides)', () => {
    let t: TestCatalog;
    beforeAll(async () => {
      t = await startTestCatalog({
        env: {
          CATALOG_ADMIN_TOKEN: TOKEN,
          CATALOG_ADMIN_OPEN: '1',
          CATALOG_PROVIDER_ALLOW_HOSTS: '127.0.0.1:9',
        },
      });
    });
    afterAll(() => t?.close());

    it('answers 401 on every admin route without the token or with a wrong one, REST and tRPC', async () => {
      const routes: [string, string, unknown][] = [
        ['POST', '/api/providers', registration('p1', 'http://127.0.0.1:9/')],
        ['PATCH', '/api/providers/p1', { license: 'x' }],
        ['DELETE', '/api/providers/p1', undefined],
        ['POST', '/api/providers/p1/sync', undefined],
      ];
      for (const [method, path, body] of routes) {
        for (const token of [undefined, 'wrong-token-0123456789abcd', TOKEN.slice(0, -1), `${TOKEN}0`]) {
          const answer = await request<{ code: string }>(`${t.url}${path}`, {
            method,
            ...(body === undefined ? {} : { body }),
            ...(token ? { token } : {}),
          });
          expect(answer.status, `${method} ${path} ${token}`).toBe(401);
          expect(answer.body.code).toBe('UNAUTHENTICATED');
        }
      }
      const trpc = await fetch(`${t.url}/trpc/providers.register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer wrong-token-0123456789abcd' },
        body: JSON.stringify(registration('p1', 'http://127.0.0.1:9/')),
      });
      expect(trpc.status).toBe(401);
      expect((await request<{ providers: unknown[] }>(`${t.url}/api/providers`)).body.providers).toEqual([]);
      const created = await request(`${t.url}/api/providers`, {
        method: 'POST',
        token: TOKEN,
        body: registration('p1', 'http://127.0.0.1:9/'),
      });
      expect(created.status).toBe(201);
    });
  });

  describe('without a token and without CATALOG_ADMIN_OPEN', () => {
    let t: TestCatalog;
    beforeAll(async () => {
      t = await startTestCatalog({
        env: { CATALOG_ADMIN_OPEN: '0', CATALOG_PROVIDER_ALLOW_HOSTS: '127.0.0.1:9' },
      });
    });
    afterAll(() => t?.close());

    it('refuses every admin call (401 naming CATALOG_ADMIN_TOKEN), even on loopback', async () => {
      const answer = await request<{ code: string; message: string }>(`${t.url}/api/providers`, {
        method: 'POST',
        body: registration('p1', 'http://127.0.0.1:9/'),
        token: 'anything-at-all-0123456789',
      });
      expect(answer.status).toBe(401);
      expect(answer.body.message).toContain('set CATALOG_ADMIN_TOKEN');
      expect((await request(`${t.url}/api/providers`)).status).toBe(200);
    });
  });
});

describe('Host header and the OpenAPI servers URL', () => {
  let t: TestCatalog;
  beforeAll(async () => {
    t = await startTestCatalog({ env: { CATALOG_ALLOWED_HOSTS: 'alias.example:8443,Other.Example' } });
  });
  afterAll(() => t?.close());

  it('answers the listen forms and the configured names; 400 for any other Host, /health excepted', async () => {
    const port = new URL(t.url).port;
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      'localhost',
      'alias.example',
      'other.example:1',
    ]) {
      expect((await withHost(`${t.url}/api/providers`, host)).status, host).toBe(200);
    }
    for (const host of [
      'evil.example',
      `evil.example:${port}`,
      '127.0.0.1.evil.example',
      'localhost@evil',
      '',
    ]) {
      const answer = await withHost(`${t.url}/api/providers`, host);
      expect(answer, host).toMatchObject({ status: 400, body: { code: 'BAD_REQUEST' } });
    }
    expect((await withHost(`${t.url}/api/providers`, null)).status).toBe(400);
    expect((await withHost(`${t.url}/trpc/providers.list`, 'evil.example')).status).toBe(400);
    expect((await withHost(`${t.url}/health`, 'evil.example')).status).toBe(200);
  });

  it('a DNS-rebinding page cannot use the open admin routes of a loopback catalog', async () => {
    const answer = await withHost(`${t.url}/api/providers`, 'rebind.evil.example', {
      method: 'POST',
      body: registration('rebound', 'http://127.0.0.1:9/'),
    });
    expect(answer.status).toBe(400);
    expect((await request<{ providers: unknown[] }>(`${t.url}/api/providers`)).body.providers).toEqual([]);
  });

  it('writes the listen URL in the OpenAPI servers, whatever Host the first request carried', async () => {
    const first = await withHost(`${t.url}/api/openapi.json`, 'alias.example');
    expect((first.body as { servers: { url: string }[] }).servers).toEqual([{ url: t.url }]);
  });

  it('writes CATALOG_PUBLIC_URL when set, and answers to its host', async () => {
    const pub = await startTestCatalog({ env: { CATALOG_PUBLIC_URL: 'https://catalog.example.org/' } });
    try {
      const doc = await withHost(`${pub.url}/api/openapi.json`, 'catalog.example.org');
      expect(doc.status).toBe(200);
      expect((doc.body as { servers: { url: string }[] }).servers).toEqual([
        { url: 'https://catalog.example.org/' },
      ]);
      expect((await withHost(`${pub.url}/api/openapi.json`, 'evil.example')).status).toBe(400);
    } finally {
      await pub.close();
    }
  });
});

describe('internal errors on /trpc', () => {
  it('are masked exactly as on REST: no database text reaches a client', async () => {
    const t = await startTestCatalog();
    try {
      // A real internal failure: the providers table is gone under the running catalog.
      await t.catalog.deps.db
        .fork()
        .getConnection()
        .execute('ALTER TABLE catalog_provider RENAME TO catalog_provider_gone');
      const trpc = await fetch(`${t.url}/trpc/providers.list?input=${encodeURIComponent('{}')}`);
      const trpcText = await trpc.text();
      expect(trpc.status).toBe(500);
      expect(JSON.parse(trpcText)).toMatchObject({
        error: { message: 'Internal error', data: { code: 'INTERNAL', httpStatus: 500 } },
      });
      const rest = await fetch(`${t.url}/api/providers`);
      const restText = await rest.text();
      expect(rest.status).toBe(500);
      expect(JSON.parse(restText)).toEqual({ message: 'Internal error', code: 'INTERNAL' });
      for (const text of [trpcText, restText]) {
        expect(text).not.toMatch(/catalog_provider|relation|does not exist|select|stack|at /i);
      }
    } finally {
      await t.close();
    }
  });
});

describe('provider egress through the API', () => {
  let provider: FixtureProvider;
  let t: TestCatalog;
  const secret = 'SECRET-BODY-5c1e <pre>Traceback: db password=hunter2</pre>';
  beforeAll(async () => {
    provider = await startFixtureProvider({
      categories: [{ slug: 'a', name: 'A' }],
      definitions: [{ id: 'D1', name: 'Cobertura vacinal', category: 'a' }],
    });
    t = await startTestCatalog({
      env: { CATALOG_PROVIDER_ALLOW_HOSTS: allowProviders(provider.url), CATALOG_PROVIDER_RETRIES: '0' },
    });
  });
  afterAll(async () => {
    await t?.close();
    await provider?.close();
  });

  it('refuses to register (400, baseUrl) a provider on an address that is not allowed', async () => {
    const port = Number(new URL(provider.url).port);
    const cases: [string, RegExp][] = [
      [`http://127.0.0.1:${port + 1}/`, /127\.0\.0\.1:\d+ is a loopback address/],
      [`http://localhost:${port + 1}/`, /localhost:\d+ resolves to a loopback address/],
      ['http://[::1]:8080/', /\[::1\]:8080 is a loopback address/],
      ['http://10.0.0.7/', /10\.0\.0\.7:80 is a private address/],
      ['http://169.254.169.254/latest/', /cloud metadata address: never allowed/],
      ['http://[::ffff:192.168.1.1]/', /is a private address/],
    ];
    for (const [baseUrl, message] of cases) {
      const answer = await request<{ code: string; message: string; fields: string[] }>(
        `${t.url}/api/providers`,
        {
          method: 'POST',
          body: registration('refused', baseUrl),
        },
      );
      expect(answer.status, baseUrl).toBe(400);
      expect(answer.body.fields).toEqual(['baseUrl']);
      expect(answer.body.message).toMatch(/^baseUrl refused: /);
      expect(answer.body.message).toMatch(message);
    }
    expect((await request<{ providers: unknown[] }>(`${t.url}/api/providers`)).body.providers).toEqual([]);
  });

  it('registers the allowed provider, and refuses to move it to a private address (PATCH)', async () => {
    expect(
      (await request(`${t.url}/api/providers`, { method: 'POST', body: registration('fx', provider.url) }))
        .status,
    ).toBe(201);
    const moved = await request<{ fields: string[] }>(`${t.url}/api/providers/fx`, {
      method: 'PATCH',
      body: { baseUrl: 'http://192.168.0.10/' },
    });
    expect(moved.status).toBe(400);
    expect(moved.body.fields).toEqual(['baseUrl']);
    expect((await request<ProviderView>(`${t.url}/api/providers/fx`)).body.baseUrl).toBe(provider.url);
  });

  it("lastError and the sync records give the status and a short reason, never the provider's body", async () => {
    for (const [status, expected] of [
      [500, 'provider answered HTTP 500'],
      [404, 'provider answered HTTP 404'],
      [200, 'provider answered a body that is not JSON'],
    ] as const) {
      provider.behavior = () => ({ kind: 'raw', status, text: secret });
      const outcome = await t.catalog.deps.sync.run('fx', 'test');
      expect(outcome.status).toBe('failed');
      expect(outcome.error).toBe(`${expected} (GET ${provider.url}/indicator-types?page=1)`);
      const view = await request<ProviderView>(`${t.url}/api/providers/fx`);
      expect(view.body.sync.lastError).toBe(outcome.error);
      const runs = await request<SyncStatusView>(`${t.url}/api/providers/fx/sync`);
      expect(runs.body.recentRuns[0]?.error).toBe(outcome.error);
      for (const text of [JSON.stringify(view.body), JSON.stringify(runs.body)]) {
        expect(text).not.toContain('SECRET');
        expect(text).not.toContain('hunter2');
      }
    }
  });

  it("a search's per-result error does not carry the provider's body either", async () => {
    provider.behavior = () => ({ kind: 'normal' });
    expect((await t.catalog.deps.sync.run('fx', 'test')).status).toBe('ok');
    provider.behavior = (r) =>
      r.path.startsWith('/indicator-values')
        ? { kind: 'raw', status: 502, text: secret }
        : { kind: 'normal' };
    const { status, body } = await request<SearchResponse>(`${t.url}/api/search?q=vacinal`);
    expect(status).toBe(200);
    expect(body.results[0]?.error).toBe('provider answered HTTP 502');
    expect(JSON.stringify(body)).not.toContain('SECRET');
    provider.behavior = () => ({ kind: 'normal' });
  });
});
