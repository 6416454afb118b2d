import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { corsPolicy } from './cors';
import { type Served, serve } from './serve.testing';
import { WEB_CLIENT_CSP, webClientRouter } from './web-client';

describe('web client at /app/', () => {
  let dir: string;
  let built: Served;
  let missing: Served;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'notary-web-'));
    await mkdir(path.join(dir, 'build', 'assets'), { recursive: true });
    await writeFile(path.join(dir, 'build', 'index.html'), '<!doctype html><title>Notary</title>');
    await writeFile(path.join(dir, 'build', 'assets', 'index-abc.js'), 'console.log(1)');
    const app = express();
    app.use('/app', webClientRouter(path.join(dir, 'build')));
    built = await serve(app);
    const bare = express();
    bare.use('/app', webClientRouter(path.join(dir, 'not-built')));
    bare.get('/health', (_req, res) => res.json({ status: 'ok' }));
    missing = await serve(bare);
  });
  afterAll(async () => {
    await built?.close();
    await missing?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('redirects /app to /app/ (the build uses relative asset paths), keeping the query', async () => {
    const res = await fetch(`${built.url}/app?x=1`, { redirect: 'manual' });
    expect(res.status).toBe(301);
    expect(res.headers.get('location')).toBe('/app/?x=1');
  });

  it('serves index.html with the strict CSP, never cached', async () => {
    const res = await fetch(`${built.url}/app/`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<title>Notary</title>');
    expect(res.headers.get('content-security-policy')).toBe(WEB_CLIENT_CSP);
    expect(WEB_CLIENT_CSP).not.toContain('unsafe');
    // Chain endpoints for the verify page (https, or loopback devnets); scripts from this origin only.
    expect(WEB_CLIENT_CSP).toContain("connect-src 'self' https: http://127.0.0.1:* http://localhost:*");
    expect(WEB_CLIENT_CSP).toContain("script-src 'self';");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-cache');
  });

  it('caches hashed assets for a year and answers index.html for other pages, 404 for missing files', async () => {
    const asset = await fetch(`${built.url}/app/assets/index-abc.js`);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const page = await fetch(`${built.url}/app/documents/123`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>Notary</title>');
    expect((await fetch(`${built.url}/app/assets/missing.js`)).status).toBe(404);
    expect((await fetch(`${built.url}/app/..%2f..%2fetc%2fpasswd`)).status).toBe(404);
  });

  it('without a build, says how to build it (and the rest of the server works)', async () => {
    const res = await fetch(`${missing.url}/app/`);
    expect(res.status).toBe(404);
    expect(await res.text()).toContain('npm run build');
    expect((await fetch(`${missing.url}/health`)).status).toBe(200);
  });
});

describe('CORS: the service’s own origin', () => {
  let server: { url: string; close: () => Promise<void> };
  beforeAll(async () => {
    const app = express();
    app.use(corsPolicy(['https://allowed.example'], () => 'https://notary.example/base'));
    app.post('/x', (_req, res) => res.json({ ok: true }));
    server = await serve(app);
  });
  afterAll(async () => server?.close());

  it.each([
    [undefined, 200],
    ['https://notary.example', 200], // the public URL's origin, whatever its path
    ['https://allowed.example', 200],
    ['https://evil.example', 403],
    ['https://notary.example.evil', 403],
  ])('Origin %s gets %s', async (origin, status) => {
    const res = await fetch(`${server.url}/x`, { method: 'POST', headers: origin ? { origin } : {} });
    expect(res.status).toBe(status);
  });
});
