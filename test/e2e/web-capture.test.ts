import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { readCaptureRecord } from '@notary/server/adapters/capture/service/screenshot-record';
import type { CaptureRecord } from '@notary/server/ports/capture';
import { type DocumentDto, RATE_LIMITS } from '@notary/shared';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WARCParser } from 'warcio';
import { api } from '../harness/http';
import { createTestPki } from '../harness/pki';
import { countPixels } from '../harness/png-pixels';
import { DATABASE_KINDS, startTestService, storedKeys, type TestService } from '../harness/service';
import { freshEmail, makeOrg } from '../harness/tenants';
import { startTestTsa } from '../harness/tsa';
import { createTestCa, solidPng, startSite, type TestCa, type TestSite } from '../harness/web-site';

const exec = promisify(execFile);
const CHROMIUM = '/usr/bin/chromium';
/** The colour the test page's script paints: found in the screenshot only if the script ran. */
const MAGENTA: [number, number, number] = [255, 0, 255];

type ErrorBody = { message: string; code: string };

/** `POST /api/documents/capture` as a client sends it. */
function capture(t: TestService, token: string, body: Record<string, unknown>) {
  return api<DocumentDto & ErrorBody>(t.url, '/api/documents/capture', { method: 'POST', token, body });
}

/** The stored WACZ of a document, through its download URL. */
async function downloadWacz(t: TestService, token: string, id: string): Promise<Buffer> {
  const dl = await api<{ downloadUrl: string }>(t.url, `/api/documents/${id}/download`, { token });
  expect(dl.status).toBe(200);
  const res = await fetch(dl.body.downloadUrl);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

/**
 * Every WARC record of a `.warc.gz` read back with warcio's parser: type, target URI, HTTP status, address,
 * and the marks of a body the browser did not hand over (`WARC-Truncated`, `WARC-Notary-Body`).
 */
async function warcRecords(gz: Uint8Array) {
  const out: Array<{
    type: string;
    url: string;
    status: number | undefined;
    ip: string | null;
    truncated: string | null;
    body: string | null;
  }> = [];
  for await (const record of WARCParser.iterRecords([gz])) {
    await record.readFully();
    out.push({
      type: record.warcType ?? '',
      url: record.warcTargetURI ?? '',
      status:
        record.httpHeaders?.statusCode === undefined ? undefined : Number(record.httpHeaders.statusCode),
      ip: record.warcHeader('WARC-IP-Address') ?? null,
      truncated: record.warcHeader('WARC-Truncated') ?? null,
      body: record.warcHeader('WARC-Notary-Body') ?? null,
    });
  }
  return out;
}

/** The test page: CSS, an image, a script that adds content, a lazy image below a tall block. */
function siteHandler(): http.RequestListener {
  const pixel = solidPng(8, 8, [0, 128, 0]);
  const lazy = solidPng(8, 8, [0, 0, 200]);
  return (req, res) => {
    switch (req.url) {
      case '/page':
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end(`<!doctype html><html><head><title>Capture test page</title>
          <link rel="stylesheet" href="/style.css"></head>
          <body><h1>Evidence</h1><img src="/pixel.png" width="8" height="8">
          <script src="/app.js"></script>
          <div style="height: 3000px">tall</div>
          <img src="/lazy.png" loading="lazy" width="8" height="8"></body></html>`);
        return;
      case '/style.css':
        res.setHeader('content-type', 'text/css');
        res.end('h1 { color: rgb(10, 20, 30); }');
        return;
      case '/app.js':
        res.setHeader('content-type', 'text/javascript');
        res.end(
          `const d = document.createElement('div'); d.id = 'added'; d.textContent = 'Added by script';
           d.style.cssText = 'width: 200px; height: 100px; background: rgb(${MAGENTA.join(',')})';
           document.body.prepend(d);`,
        );
        return;
      case '/pixel.png':
        res.setHeader('content-type', 'image/png');
        res.end(pixel);
        return;
      case '/lazy.png':
        res.setHeader('content-type', 'image/png');
        res.end(lazy);
        return;
      case '/missing':
        res.statusCode = 404;
        res.setHeader('content-type', 'text/html');
        res.end('<!doctype html><title>Not here</title><p>No such page</p>');
        return;
      default:
        res.statusCode = 404;
        res.end();
    }
  };
}

describe.each(DATABASE_KINDS)('web capture on %s', (kind) => {
  let t: TestService;
  let ca: TestCa;
  let site: TestSite;
  let entry: TestSite;
  let token: string;

  beforeAll(async () => {
    ca = await createTestCa();
    site = await startSite(siteHandler(), { certPem: ca.chainPem, keyPem: ca.keyPem });
    // A plain HTTP origin that redirects to the HTTPS page: the chain crosses origins and schemes.
    entry = await startSite((req, res) => {
      res.statusCode = req.url === '/start' ? 302 : 404;
      if (req.url === '/start') res.setHeader('location', `${site.origin}/page`);
      res.end();
    });
    t = await startTestService(kind, {
      CHROMIUM_PATH: CHROMIUM,
      CAPTURE_ALLOW_HOSTS: '127.0.0.1',
      CAPTURE_CA_CERTS: ca.caPath,
      RATE_LIMITS: 'on',
    });
    token = await t.token(freshEmail('capture'));
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await site?.close();
    await entry?.close();
    await ca?.close();
  });

  it('captures a page: every exchange in the WACZ, screenshot, record, hash of the WACZ', async () => {
    const requested = `${entry.origin}/start`;
    const res = await capture(t, token, { url: requested, consent: true });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const doc = res.body;
    expect(doc.sourceType).toBe('web-capture');
    expect(doc.sourceUri).toBe(requested);
    expect(doc.fileName).toMatch(/^127\.0\.0\.1-\d{8}T\d{6}Z\.wacz$/);
    expect(doc.onchainStatus).toBe('pending');

    // The screenshot preview: a presigned PNG, the same bytes as the WACZ's screenshot.
    expect(doc.screenshot).toEqual(expect.any(String));
    const shot = await fetch(doc.screenshot ?? '');
    expect(shot.status).toBe(200);
    expect(shot.headers.get('content-type')).toBe('image/png');
    const screenshot = Buffer.from(await shot.arrayBuffer());

    const wacz = await downloadWacz(t, token, doc.id);
    expect(createHash('sha256').update(wacz).digest('hex')).toBe(doc.sha256Hash);
    const files = unzipSync(wacz);
    expect(Object.keys(files).sort()).toEqual([
      'archive/data.warc.gz',
      'capture/capture.json',
      'capture/page.pdf',
      'capture/provenance-summary.html',
      'capture/screenshot.png',
      'capture/tls.json',
      'datapackage-digest.json',
      'datapackage.json',
      'indexes/index.cdx',
      'pages/pages.jsonl',
    ]);
    // datapackage.json: each file's SHA-256 and size verify.
    const pkg = JSON.parse(Buffer.from(files['datapackage.json'] ?? []).toString()) as {
      wacz_version: string;
      resources: Array<{ path: string; hash: string; bytes: number }>;
    };
    expect(pkg.wacz_version).toBe('1.1.1');
    expect(pkg.resources.map((r) => r.path).sort()).toEqual(
      Object.keys(files)
        .filter((f) => f !== 'datapackage.json' && f !== 'datapackage-digest.json')
        .sort(),
    );
    for (const r of pkg.resources) {
      const bytes = files[r.path] ?? new Uint8Array();
      expect(r.bytes, r.path).toBe(bytes.length);
      expect(r.hash, r.path).toBe(`sha256:${createHash('sha256').update(bytes).digest('hex')}`);
    }
    expect(Buffer.from(files['capture/screenshot.png'] ?? []).equals(screenshot)).toBe(true);

    // Every exchange, read back with warcio: the redirect, the page and each subresource, lazy one included.
    const records = await warcRecords(files['archive/data.warc.gz'] ?? new Uint8Array());
    expect(records[0]?.type).toBe('warcinfo');
    const responses = new Map(records.filter((r) => r.type === 'response').map((r) => [r.url, r]));
    expect(responses.get(requested)?.status).toBe(302);
    // The redirect announced an empty body (`Content-Length: 0`): nothing is marked missing.
    expect(responses.get(requested)?.truncated).toBeNull();
    for (const p of ['/page', '/style.css', '/app.js', '/pixel.png', '/lazy.png']) {
      expect(responses.get(`${site.origin}${p}`)?.status, p).toBe(200);
      expect(responses.get(`${site.origin}${p}`)?.ip, p).toBe('127.0.0.1');
      expect(responses.get(`${site.origin}${p}`)?.truncated, p).toBeNull();
      expect(
        records.some((r) => r.type === 'request' && r.url === `${site.origin}${p}`),
        p,
      ).toBe(true);
    }
    const cdx = Buffer.from(files['indexes/index.cdx'] ?? []).toString();
    expect(cdx).toContain(`"url":"${site.origin}/lazy.png"`);

    // capture.json: the redirect chain, the final URL, the server's address and TLS fingerprint.
    const record = JSON.parse(Buffer.from(files['capture/capture.json'] ?? []).toString()) as CaptureRecord;
    expect(record).toMatchObject({
      requestedUrl: requested,
      finalUrl: `${site.origin}/page`,
      status: 200,
      redirects: [{ url: requested, status: 302, location: `${site.origin}/page` }],
      serverIp: '127.0.0.1',
      browser: { name: 'Chromium' },
      viewport: { width: 1280, height: 800 },
      title: 'Capture test page',
      blocked: [],
    });
    expect(record.tls?.sha256Fingerprint).toBe(ca.fingerprint);
    expect(record.tls?.issuer).toContain('Notary Capture Test CA');
    expect(record.userAgent).toContain('NotaryCapture/1.0');
    expect(Date.parse(record.finishedAt)).toBeGreaterThanOrEqual(Date.parse(record.startedAt));
    expect(record.servers).toEqual(
      expect.arrayContaining([
        { host: '127.0.0.1', port: entry.port, ip: '127.0.0.1' },
        { host: '127.0.0.1', port: site.port, ip: '127.0.0.1' },
      ]),
    );
    // The screenshot carries the same record, and shows what the script added.
    expect(readCaptureRecord(screenshot)?.finalUrl).toBe(`${site.origin}/page`);
    expect(await countPixels(screenshot, MAGENTA)).toBeGreaterThan(100 * 50);

    // The document and the list carry a fresh preview URL of the same screenshot.
    const got = await api<{ document: DocumentDto }>(t.url, `/api/documents/${doc.id}`, { token });
    expect(got.body.document.sourceType).toBe('web-capture');
    const again = await fetch(got.body.document.screenshot ?? '');
    expect(Buffer.from(await again.arrayBuffer()).equals(screenshot)).toBe(true);
    const list = await api<{ documents: DocumentDto[] }>(t.url, '/api/documents', { token });
    expect(list.body.documents.find((d) => d.id === doc.id)?.screenshot).toEqual(expect.any(String));

    // The certificate states the capture: URLs, status, times, server address, TLS fingerprint.
    const cert = await fetch(`${t.url}/api/documents/${doc.id}/certificate?lang=en`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(cert.status).toBe(200);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'capture-cert-'));
    try {
      const file = path.join(dir, 'certificate.pdf');
      await writeFile(file, Buffer.from(await cert.arrayBuffer()));
      const { stdout } = await exec('pdftotext', [file, '-']);
      const text = stdout.replace(/\s+/g, ' ');
      expect(text).toContain(`Web capture of ${requested}`);
      expect(text).toContain(`final URL ${site.origin}/page (HTTP 200, after 1 redirect(s))`);
      expect(text).toContain('server address 127.0.0.1');
      expect(text).toContain(ca.fingerprint);
      expect(text).toContain(record.startedAt.replace('T', ' ').replace(/\.\d+Z$/, ''));
      expect(text).toContain(doc.sha256Hash);
      // ...and shows the screenshot itself, captioned, after the facts (on whichever page they end).
      expect(text).toContain('Screenshot of the page as captured');
      const images = await exec('pdfimages', ['-list', file]);
      expect(images.stdout).toMatch(/^\s*\d+\s+\d+\s+image\s+1280\s/m);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a site answering 404 is captured with its status; bad input and roles are refused first', async () => {
    const missing = await capture(t, token, { url: `${site.origin}/missing`, consent: true });
    expect(missing.status, JSON.stringify(missing.body)).toBe(201);
    const wacz = unzipSync(await downloadWacz(t, token, missing.body.id));
    const record = JSON.parse(Buffer.from(wacz['capture/capture.json'] ?? []).toString()) as CaptureRecord;
    expect(record.status).toBe(404);

    // Each call counts against the caller's 5 a minute: these go on a user of their own.
    const user = await t.token(freshEmail('inputs'));
    const keysBefore = (await storedKeys(t)).length;
    expect((await capture(t, user, { url: 'not a url', consent: true })).status).toBe(400);
    expect((await capture(t, user, { url: 'file:///etc/passwd', consent: true })).status).toBe(400);
    expect((await capture(t, user, { url: 'ftp://127.0.0.1/', consent: true })).status).toBe(400);
    expect((await capture(t, user, { url: `${site.origin}/page`, consent: false })).status).toBe(400);
    const org = await makeOrg(t, 'Capture', [
      [freshEmail('owner'), 'owner'],
      [freshEmail('reader'), 'reader'],
    ]);
    const reader = Object.values(org.tokens)[1] ?? '';
    const forbidden = await capture(t, reader, { url: `${site.origin}/page`, consent: true });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.code).toBe('FORBIDDEN');
    expect((await storedKeys(t)).length).toBe(keysBefore);
  });

  it(`the ${RATE_LIMITS.webCapture + 1}th capture call in a minute is 429`, async () => {
    const user = await t.token(freshEmail('limited'));
    // Every call counts, refused ones too (see above): calls refused at once fill the window in milliseconds,
    // so the limit is met inside one window however slow the machine is, and the valid call after them is
    // refused before any browser starts.
    for (let i = 0; i < RATE_LIMITS.webCapture; i++) {
      const refused = await capture(t, user, { url: `${site.origin}/missing`, consent: false });
      expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    }
    const keysBefore = (await storedKeys(t)).length;
    const limited = await capture(t, user, { url: `${site.origin}/missing`, consent: true });
    expect((await storedKeys(t)).length).toBe(keysBefore);
    expect(limited.status).toBe(429);
    expect(limited.body.message).toContain('webCapture');
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});

/**
 * Hostile pages, which must never be a way into the service's network, with only the test origin allowed
 * (`CAPTURE_ALLOW_HOSTS=127.0.0.1:<port>`). Refused destinations are refused before any connection is made: nothing
 * here sends a packet beyond the loopback test origin.
 */
describe('web capture of hostile pages', () => {
  // The default bound: generous for a loaded machine, and what the endless script runs into.
  const TIMEOUT_MS = 30_000;
  let t: TestService;
  let site: TestSite;
  let token: string;
  const streams = new Set<http.ServerResponse>();
  const gate: Array<() => void> = [];

  beforeAll(async () => {
    const pixel = solidPng(4, 4, [0, 128, 0]);
    let port = 0;
    site = await startSite((req, res) => {
      const html = (body: string) => {
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end(`<!doctype html><html><head><title>hostile</title></head><body>${body}</body></html>`);
      };
      switch (req.url) {
        case '/redirect-loopback':
          res.writeHead(302, { location: `http://127.0.0.2:${port}/` }).end();
          return;
        case '/redirect-metadata':
          res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
          return;
        case '/subresources':
          html(`<img src="/pixel.png"><img src="http://10.0.0.1/x.png">
            <img src="http://localhost:${port}/pixel.png"><img src="file:///etc/passwd">
            <a href="file:///etc/hostname">local file</a>
            <script>
              fetch('http://127.0.0.2:${port}/x').catch(() => {});
              try { new WebSocket('ws://169.254.169.254/socket'); } catch (e) {}
            </script>`);
          return;
        case '/pixel.png':
          res.setHeader('content-type', 'image/png');
          res.end(pixel);
          return;
        case '/loop':
          html('<p>stuck</p><script>for (;;) {}</script>');
          return;
        case '/stream':
          html('<p>streaming</p><iframe src="/endless"></iframe>');
          return;
        case '/endless': {
          // Sends forever (until the capture cuts the connection; a safety stop after two minutes).
          res.writeHead(200, { 'content-type': 'text/html' });
          streams.add(res);
          const timer = setInterval(() => res.write(`<p>${'.'.repeat(1000)}</p>`), 20);
          const stop = setTimeout(() => res.end(), 120_000);
          res.once('close', () => {
            clearInterval(timer);
            clearTimeout(stop);
            streams.delete(res);
          });
          return;
        }
        case '/gate':
          // Held until the test opens the gate: the capture stays busy meanwhile.
          gate.push(() => html('<p>gate open</p>'));
          return;
        case '/download':
          html(
            `<a id="dl" href="/file.bin" download>file</a><script>document.getElementById('dl').click()</script>`,
          );
          return;
        case '/file.bin':
        case '/attachment':
          res.writeHead(200, {
            'content-type': 'application/octet-stream',
            'content-disposition': 'attachment; filename="file.bin"',
          });
          res.end(Buffer.alloc(64));
          return;
        default:
          res.writeHead(404).end();
      }
    });
    port = site.port;
    t = await startTestService('pglite', {
      CHROMIUM_PATH: CHROMIUM,
      CAPTURE_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
      CAPTURE_TIMEOUT_MS: String(TIMEOUT_MS),
      // One workspace fills the whole queue here (the queue's own 429); the share per workspace is
      // test/e2e/capture-share.test.ts's.
      CAPTURE_TENANT_MAX: '6',
    });
    token = await t.token(freshEmail('hostile'));
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await site?.close();
  });

  const recordOf = async (doc: DocumentDto): Promise<CaptureRecord> => {
    const files = unzipSync(await downloadWacz(t, token, doc.id));
    return JSON.parse(Buffer.from(files['capture/capture.json'] ?? []).toString()) as CaptureRecord;
  };

  it('a redirect of the page to loopback or to the metadata address is 400, a private name 502 as an unknown one, nothing stored', async () => {
    const keys = (await storedKeys(t)).length;
    for (const [path, address] of [
      ['/redirect-loopback', '127.0.0.2'],
      ['/redirect-metadata', '169.254.169.254'],
    ]) {
      const res = await capture(t, token, { url: `${site.origin}${path}`, consent: true });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.message).toContain('Destination not allowed');
      expect(res.body.message).toContain('is not a public address');
      // The redirect's URL named the address itself.
      expect(res.body.message).toContain(address);
    }
    // A name that resolves to loopback is not the allowed host: checked by address, refused, and the client
    // is told neither what the name resolved to nor that it resolved at all: the answer is the one of a name
    // that does not resolve (else which internal names exist would leak).
    const named = await capture(t, token, { url: `http://localhost:${site.port}/pixel.png`, consent: true });
    const unknown = await capture(t, token, { url: 'http://no-such-name.invalid/', consent: true });
    expect(named.status).toBe(502);
    expect(named.body.message).toContain('does not resolve to a public address');
    expect(named.body.message).not.toContain('127.0.0.1');
    expect([unknown.status, unknown.body.message]).toEqual([named.status, named.body.message]);
    // An address outside the allowed one, written as a number.
    const numeric = await capture(t, token, { url: 'http://2130706434/', consent: true });
    expect(numeric.status).toBe(400);
    expect(numeric.body.message).toContain('127.0.0.2');
    expect((await storedKeys(t)).length).toBe(keys);
  });

  it('refused subresources (private, loopback by name, metadata WebSocket, file://) are recorded as blocked', async () => {
    const res = await capture(t, token, { url: `${site.origin}/subresources`, consent: true });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const record = await recordOf(res.body);
    const blocked = record.blocked.map((b) => `${b.url} ${b.ip ?? '-'} ${b.reason}`).join('\n');
    const notPublic = 'the destination is not a public address';
    // An address the URL named is repeated; what a name resolved to is not (it is in the operator's log).
    expect(blocked).toContain(`http://10.0.0.1/x.png 10.0.0.1 ${notPublic}`);
    expect(blocked).toContain(`http://localhost:${site.port}/pixel.png - ${notPublic}`);
    expect(blocked).toContain(`http://127.0.0.2:${site.port}/x 127.0.0.2 ${notPublic}`);
    expect(blocked).toContain('169.254.169.254');
    expect(blocked).toContain('file:///etc/passwd');
    // Only the allowed origin was ever connected to.
    expect(record.servers).toEqual([{ host: '127.0.0.1', port: site.port, ip: '127.0.0.1' }]);
  });

  it('a download is refused and recorded; a URL that is itself a download is 400', async () => {
    const res = await capture(t, token, { url: `${site.origin}/download`, consent: true });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const record = await recordOf(res.body);
    expect(record.blocked).toContainEqual({
      url: `${site.origin}/file.bin`,
      ip: null,
      reason: 'download refused',
      rule: 'download',
    });
    const attachment = await capture(t, token, { url: `${site.origin}/attachment`, consent: true });
    expect(attachment.status).toBe(400);
    expect(attachment.body.message).toContain('download');
  });

  it('an endless stream is cut at the bound and recorded as unfinished', { timeout: 120_000 }, async () => {
    const res = await capture(t, token, { url: `${site.origin}/stream`, consent: true });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const record = await recordOf(res.body);
    expect(record.unfinished).toContain(`${site.origin}/endless`);
    // Its body never came whole: the archive says so instead of holding an empty one.
    const files = unzipSync(await downloadWacz(t, token, res.body.id));
    const records = await warcRecords(files['archive/data.warc.gz'] ?? new Uint8Array());
    const endless = records.find((r) => r.type === 'response' && r.url === `${site.origin}/endless`);
    expect(endless?.truncated).toBe('unspecified');
    expect(endless?.body).toBe('missing');
    // The capture cut the connection: the site sees it closed (a deadline, not a duration).
    await expect.poll(() => streams.size, { timeout: 30_000 }).toBe(0);
  });

  it('with one browser busy and 4 captures waiting, one more is 429 at once; the others then finish', async () => {
    const calls = Array.from({ length: 6 }, () =>
      capture(t, token, { url: `${site.origin}/gate`, consent: true }),
    );
    // Nothing can finish before the gate opens but a refusal.
    const first = await Promise.race(calls);
    expect(first.status, JSON.stringify(first.body)).toBe(429);
    expect(first.body.message).toContain('queue is full');
    expect(first.headers.get('retry-after')).toMatch(/^\d+$/);
    // Each capture in turn reaches the gate; open it for each until all five are through.
    const done = Promise.all(calls);
    let settled = false;
    void done.finally(() => {
      settled = true;
    });
    while (!settled) {
      await expect.poll(() => gate.length > 0 || settled, { timeout: 60_000 }).toBe(true);
      gate.shift()?.();
    }
    const statuses = (await done).map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 201, 201, 429]);
  }, 180_000);

  it('an endless script is 504 at CAPTURE_TIMEOUT_MS, and the service answers others meanwhile', async () => {
    const started = Date.now();
    let settled = false;
    const stuck = capture(t, token, { url: `${site.origin}/loop`, consent: true }).finally(() => {
      settled = true;
    });
    // Once the page was served, the capture can only end at its deadline: the service must answer now.
    await expect.poll(() => site.requests.includes('/loop'), { timeout: TIMEOUT_MS }).toBe(true);
    const health = await api(t.url, '/health');
    expect(health.status).toBe(200);
    const list = await api<{ documents: unknown[] }>(t.url, '/api/documents', { token });
    expect(list.status).toBe(200);
    expect(settled).toBe(false);
    const res = await stuck;
    expect(res.status, JSON.stringify(res.body)).toBe(504);
    expect(res.body.code).toBe('GATEWAY_TIMEOUT');
    console.log(`[web-capture] endless script answered 504 after ${Date.now() - started} ms`);
  }, 120_000);
});

describe('web capture without Chromium', () => {
  it('the service starts; the route answers 503 saying how to install it or set CHROMIUM_PATH', async () => {
    const t = await startTestService('pglite', { CHROMIUM_PATH: '/nonexistent/chromium' });
    try {
      const token = await t.token(freshEmail('nochromium'));
      const res = await capture(t, token, { url: 'https://example.org/', consent: true });
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
      expect(res.body.message).toContain('apt-get install chromium');
      expect(res.body.message).toContain('CHROMIUM_PATH');
    } finally {
      await t.close();
    }
  });
});

describe('web capture with a TSA', () => {
  it('the WACZ hash is timestamped (RFC 3161) at capture time; the receipt carries the token', async () => {
    const pki = await createTestPki();
    const tsa = await startTestTsa(pki);
    const site = await startSite(siteHandler());
    const t = await startTestService('pglite', {
      CHROMIUM_PATH: CHROMIUM,
      CAPTURE_ALLOW_HOSTS: `127.0.0.1:${site.port}`,
      TSA_URL: tsa.url,
      TSA_CA_CERTS: pki.caChainPath,
    });
    try {
      const token = await t.token(freshEmail('tsa'));
      const before = Date.now();
      const res = await capture(t, token, { url: `${site.origin}/page`, consent: true });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const receipt = await api<{ timestamp: { genTime: string; token: string } | null }>(
        t.url,
        `/api/documents/${res.body.id}/receipt`,
        { token },
      );
      expect(receipt.status).toBe(200);
      expect(receipt.body.timestamp).not.toBeNull();
      // genTime has whole seconds: not before the request's second.
      expect(Date.parse(receipt.body.timestamp?.genTime ?? '')).toBeGreaterThanOrEqual(
        Math.floor(before / 1000) * 1000,
      );
    } finally {
      await t.close();
      await site.close();
      await tsa.stop();
    }
  }, 120_000);
});
