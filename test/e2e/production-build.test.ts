import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DocumentDto } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BuiltFile, buildServer, SERVER_DIST_DIR, SERVER_ENTRIES } from '../../server/build/build';
import { type Child, freePort, nodeScript, runCommand, startChild } from '../bench/lib';
import { uploadBytes, waitRegistered } from '../harness/anchored';
import { CHROMIUM } from '../harness/chromium';
import { api } from '../harness/http';
import { NODE, ROOT } from '../harness/npm-start';
import { createTestPki, type TestPki } from '../harness/pki';
import { startProductionStandIns } from '../harness/production-shape';
import { radosgwAvailable } from '../harness/radosgw';
import { rsaSigner, signedPdf } from '../harness/signed-pdfs';
import { startTestTsa, type TestTsa } from '../harness/tsa';
import { startSite } from '../harness/web-site';

/**
 * The built service (`npm run build:server`, server/dist/) run as production runs it, `node server/dist/main.mjs`
 * without tsx: every worker thread and child process found beside the bundle, the files it serves found from
 * there, its operator CLI (`cli.mjs`) working, on the embedded defaults and in the production shape.
 */

const SOURCES = ['server/src', 'platform/src', 'pdf/src', 'shared/src'];

/** Every `moduleEntry(import.meta.url, '<name>')` of the product's sources: the entries the build must emit. */
async function entriesAskedFor(): Promise<Map<string, string>> {
  const asked = new Map<string, string>();
  for (const dir of SOURCES) {
    for (const file of await readdir(path.join(ROOT, dir), { recursive: true })) {
      if (!file.endsWith('.ts') || /\.(test|testing)\.ts$/.test(file)) continue;
      const text = await readFile(path.join(ROOT, dir, file), 'utf8');
      for (const m of text.matchAll(/moduleEntry\(import\.meta\.url, '([^']+)'\)/g)) {
        asked.set(m[1] as string, path.join(dir, path.dirname(file), `${m[1]}.ts`));
      }
    }
  }
  return asked;
}

/** The built service on 127.0.0.1:`port`, `env` over a clean environment; resolves once it listens. */
async function startBuilt(port: number, env: Record<string, string>): Promise<Child> {
  const production = nodeScript(ROOT, 'start:production', 'server/dist/main.mjs');
  const child = startChild('built', NODE, [...production.nodeArgs, production.entry], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: os.tmpdir(), HOST: '127.0.0.1', PORT: String(port), ...env },
  });
  await child.waitForLine(/\[notary\] listening on/, 120_000);
  return child;
}

/** `node server/dist/cli.mjs <args>` with `env`; its standard output, trimmed. @throws unless it exits 0. */
async function cli(env: Record<string, string>, ...args: string[]): Promise<string> {
  const r = await runCommand(NODE, ['server/dist/cli.mjs', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: os.tmpdir(), ...env },
  });
  if (r.code !== 0) throw new Error(`cli ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout.trim();
}

/** Uploads a signed PDF, waits for both anchors, and checks the certificate and the receipt it gets. */
async function notarizeSignedPdf(base: string, token: string, pki: TestPki): Promise<void> {
  const doc = await uploadBytes({ url: base }, token, await signedPdf(await rsaSigner(pki)), 'signed.pdf');
  await waitRegistered({ url: base }, token, doc.id, 90_000);
  // The certificate: rendered and stamped in `stamp-worker.mjs`, signed by the configured certificate.
  const cert = await fetch(`${base}/api/documents/${doc.id}/certificate?lang=en`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(cert.status).toBe(200);
  const pdf = Buffer.from(await cert.arrayBuffer());
  expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
  expect(pdf.includes(Buffer.from('/ByteRange'))).toBe(true);
  expect(cert.headers.get('x-pdfa')).toBe('none; original not PDF/A');
  // A separate certificate is PDF/A-3b: its sRGB profile (from `pdfkit`) is found from the bundle too.
  const text = await uploadBytes({ url: base }, token, Buffer.from('contrato\n'), 'contrato.txt');
  const separate = await fetch(`${base}/api/documents/${text.id}/certificate`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(separate.status).toBe(200);
  expect(separate.headers.get('x-pdfa')).toBe('PDF/A-3b');
  const separatePdf = Buffer.from(await separate.arrayBuffer());
  expect(separatePdf.includes(Buffer.from('/GTS_PDFA1'))).toBe(true);
  expect(separatePdf.includes(Buffer.from('<pdfaid:part>3</pdfaid:part>'))).toBe(true);
  // The receipt: the original's signatures read in `signature-reader-worker.mjs`.
  const receipt = await api<{ originalSignatures?: { status: string; signatures?: unknown[] } }>(
    base,
    `/api/documents/${doc.id}/receipt`,
    { token },
  );
  expect(receipt.status).toBe(200);
  expect(receipt.body.originalSignatures).toMatchObject({ status: 'read', signatures: [expect.anything()] });
  const verified = await api<{ found: boolean }>(base, `/api/public/verify?hash=${doc.sha256Hash}`);
  expect(verified.body.found).toBe(true);
}

/**
 * The installed packages the built service loads when it starts: from `main.mjs`, its static imports and the
 * service it imports once Node's compile cache is on, then every static import of those files, transitively.
 */
function packagesLoadedAtStart(files: BuiltFile[]): Set<string> {
  const byPath = new Map(files.map((f) => [f.file, f]));
  const main = byPath.get('server/dist/main.mjs');
  if (!main) throw new Error('no main.mjs in the build');
  const queue = main.imports.filter((i) => !i.external).map((i) => i.path);
  const seen = new Set<string>();
  const packages = new Set(main.imports.filter((i) => i.external).map((i) => i.path));
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const file = byPath.get(next);
    if (seen.has(next) || !file) continue;
    seen.add(next);
    for (const i of file.imports) {
      if (i.kind !== 'import-statement') continue;
      if (i.external) packages.add(i.path);
      else queue.push(i.path);
    }
  }
  return packages;
}

describe('the built service (server/dist)', () => {
  let built: BuiltFile[];
  let pki: TestPki;
  let tsa: TestTsa;
  const children: Child[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    built = await buildServer();
    pki = await createTestPki();
    tsa = await startTestTsa(pki);
  }, 120_000);

  afterAll(async () => {
    await Promise.all(children.map((c) => c.stop()));
    await tsa?.stop();
    await pki?.dispose();
    await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  });

  it('loads at start none of the code an idle service does not use (PDF writing, web archive, mail, devnets)', () => {
    const loaded = [...packagesLoadedAtStart(built)];
    const lazy = [
      'pdf-lib',
      '@pdf-lib/fontkit',
      'qrcode',
      'playwright-core',
      'warcio',
      'nodemailer',
      'file-type',
      '@aws-sdk/client-s3',
    ];
    expect(loaded.filter((p) => lazy.some((l) => p === l || p.startsWith(`${l}/`)))).toEqual([]);
    expect(loaded.filter((p) => p.startsWith('hardhat') || p.startsWith('@hirosystems/'))).toEqual([]);
  });

  it('emits an entry for every worker thread and child process the sources start', async () => {
    const asked = await entriesAskedFor();
    expect(asked.size).toBeGreaterThanOrEqual(6);
    for (const [name, source] of asked) {
      expect(SERVER_ENTRIES[name], `${name} (${source})`).toBe(source);
    }
    const built = new Set(await readdir(SERVER_DIST_DIR));
    for (const name of Object.keys(SERVER_ENTRIES)) {
      expect(built.has(`${name}.mjs`), name).toBe(true);
    }
  });

  it('runs on the embedded defaults: PGlite and both devnets in threads, files, web client, CLI, capture', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-built-'));
    dirs.push(dataDir);
    const port = await freePort();
    const env = {
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      SIGNING_CERT: pki.rsa.p12Path,
      SIGNING_CERT_PASSWORD: pki.p12Password,
      SIGNING_LEVEL: 'B-T',
      TSA_URL: tsa.url,
      CHROMIUM_PATH: CHROMIUM,
      CAPTURE_ALLOW_HOSTS: '127.0.0.1',
    };
    children.push(await startBuilt(port, env));
    const base = `http://127.0.0.1:${port}`;
    await cli(env, 'user:create', '--email', 'built@example.com');
    const token = await cli(env, 'token', '--email', 'built@example.com');
    await notarizeSignedPdf(base, token, pki);
    // The web client and the verifier's files, found from the bundle's place.
    const app = await fetch(`${base}/app/`);
    expect(app.status).toBe(200);
    expect(await app.text()).toContain('<div id="root">');
    const page = await fetch(`${base}/verify/verify.html`);
    expect(page.status).toBe(200);
    // A web capture: Chromium driven from `capture-process.mjs`, its archive signed by the service.
    if (existsSync(CHROMIUM)) {
      const site = await startSite((_req, res) => {
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end('<!doctype html><title>Built</title><h1>Captured by the built service</h1>');
      });
      try {
        const captured = await api<DocumentDto>(base, '/api/documents/capture', {
          method: 'POST',
          token,
          body: { url: `${site.origin}/`, consent: true },
        });
        expect(captured.status, JSON.stringify(captured.body)).toBe(201);
        expect(captured.body.sourceType).toBe('web-capture');
      } finally {
        await site.close();
      }
    }
  }, 240_000);

  it.skipIf(!radosgwAvailable())(
    'runs in the production shape: PostgreSQL, S3, configured chains',
    async () => {
      const port = await freePort();
      const standIns = await startProductionStandIns({
        publicUrl: `http://127.0.0.1:${port}`,
        stacksBlockMs: 200,
      });
      try {
        const dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-built-prod-'));
        dirs.push(dataDir);
        const env = {
          ...standIns.env,
          DATA_DIR: dataDir,
          LOG_LEVEL: 'warn',
          ANCHOR_BATCH_SECONDS: '0.5',
          EVM_CONFIRMATIONS: '1',
          STACKS_CONFIRMATIONS: '1',
          SIGNING_CERT: pki.rsa.p12Path,
          SIGNING_CERT_PASSWORD: pki.p12Password,
          SIGNING_LEVEL: 'B-T',
          TSA_URL: tsa.url,
        };
        const child = await startBuilt(port, env);
        children.push(child);
        await cli(env, 'user:create', '--email', 'prod@example.com');
        const token = await cli(env, 'token', '--email', 'prod@example.com');
        await notarizeSignedPdf(`http://127.0.0.1:${port}`, token, pki);
        await child.stop();
      } finally {
        await standIns.stop();
      }
    },
    300_000,
  );
});
