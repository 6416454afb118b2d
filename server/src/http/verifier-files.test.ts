import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Served, serve } from './serve.testing';
import { verifierRouter } from './verifier-files';

const PAGE_CSP = "default-src 'none'; script-src 'sha256-abc='; connect-src https:";

describe('the verifier at /verify/', () => {
  let dir: string;
  let built: Served;
  let missing: Served;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'notary-verifier-files-'));
    await mkdir(path.join(dir, 'dist'));
    await writeFile(
      path.join(dir, 'dist', 'verify.html'),
      `<!doctype html><head><meta http-equiv="Content-Security-Policy" content="${PAGE_CSP}"><title>Verify</title>`,
    );
    await writeFile(path.join(dir, 'dist', 'notary-verify.mjs'), '#!/usr/bin/env node\nconsole.log(1);\n');
    await writeFile(path.join(dir, 'dist', 'SHA256SUMS'), `${'0'.repeat(64)}  notary-verify.mjs\n`);
    await writeFile(path.join(dir, 'dist', 'secret.txt'), 'not served');
    const app = express();
    app.use('/verify', verifierRouter(path.join(dir, 'dist')));
    built = await serve(app);
    const bare = express();
    bare.use('/verify', verifierRouter(path.join(dir, 'not-built')));
    missing = await serve(bare);
  });
  afterAll(async () => {
    await built?.close();
    await missing?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves the page with its own policy as a header too, never framed, revalidated', async () => {
    const redirect = await fetch(`${built.url}/verify`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/verify/');
    const res = await fetch(`${built.url}/verify/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toContain('<title>Verify</title>');
    expect(res.headers.get('content-security-policy')).toBe(`${PAGE_CSP}; frame-ancestors 'none'`);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('content-disposition')).toBeNull();
  });

  it('serves the one-file command line and the page as downloads, and their SHA-256 list', async () => {
    const mjs = await fetch(`${built.url}/verify/notary-verify.mjs`);
    expect(mjs.status).toBe(200);
    expect(mjs.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(mjs.headers.get('content-disposition')).toBe('attachment; filename=notary-verify.mjs');
    expect(mjs.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect(await mjs.text()).toContain('console.log(1)');
    const page = await fetch(`${built.url}/verify/verify.html`);
    expect(page.headers.get('content-disposition')).toBe('attachment; filename=verify.html');
    const sums = await fetch(`${built.url}/verify/SHA256SUMS`);
    expect(sums.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await sums.text()).toMatch(/^0{64} {2}notary-verify\.mjs\n$/);
  });

  it('serves nothing else from the folder', async () => {
    expect((await fetch(`${built.url}/verify/secret.txt`)).status).toBe(404);
    expect((await fetch(`${built.url}/verify/..%2fdist%2fverify.html`)).status).toBe(404);
    expect((await fetch(`${built.url}/verify/constructor`)).status).toBe(404);
  });

  it('without a build, says how to build it', async () => {
    for (const p of ['/verify/', '/verify/notary-verify.mjs', '/verify/SHA256SUMS']) {
      const res = await fetch(`${missing.url}${p}`);
      expect(res.status, p).toBe(404);
      expect(await res.text()).toContain('npm run build -w @notary/verify');
    }
  });
});
