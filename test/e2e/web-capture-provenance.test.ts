import { execFile } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { TLS_LIMITS } from '@notary/server/adapters/capture/child/provenance';
import {
  PROVENANCE_FILES,
  PROVENANCE_PAGE_URL,
  SUMMARY_MAX_BYTES,
} from '@notary/server/adapters/capture/service/provenance-summary';
import { stripCaptureRecord } from '@notary/server/adapters/capture/service/screenshot-record';
import type { CaptureRecord } from '@notary/server/ports/capture';
import type { DocumentDto } from '@notary/shared';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api } from '../harness/http';
import { countPixels } from '../harness/png-pixels';
import { startTestService, type TestService } from '../harness/service';
import { freshEmail } from '../harness/tenants';
import { replayProblems } from '../harness/wacz-replay';
import { createTestCa, solidPng, startSite, type TestCa, type TestSite } from '../harness/web-site';

const exec = promisify(execFile);
const CHROMIUM = '/usr/bin/chromium';
/** The colour of the image the page loads only once scrolled to: found in the screenshot only if it was. */
const LAZY: [number, number, number] = [0, 160, 255];
const EGRESS_IP = '198.51.100.23';
/** HTTPS origins of the page with many (one server each, on its own port). */
const MANY = 250;
/** `CAPTURE_TIMEOUT_MS` of the suite's service. */
const TIMEOUT_MS = 60_000;

type ErrorBody = { message: string; code: string };
type Files = Record<string, Uint8Array>;

function capture(t: TestService, token: string, url: string) {
  return api<DocumentDto & ErrorBody>(t.url, '/api/documents/capture', {
    method: 'POST',
    token,
    body: { url, consent: true },
  });
}

async function downloadWacz(t: TestService, token: string, id: string): Promise<Buffer> {
  const dl = await api<{ downloadUrl: string }>(t.url, `/api/documents/${id}/download`, { token });
  expect(dl.status).toBe(200);
  return Buffer.from(await (await fetch(dl.body.downloadUrl)).arrayBuffer());
}

/** The archive's file whose path ends with `name` (the capture's own files sit in a directory of their own). */
function fileEnding(files: Files, name: string): Uint8Array {
  const key = Object.keys(files).find((k) => k === name || k.endsWith(`/${name}`));
  if (!key) throw new Error(`no ${name} in the archive: ${Object.keys(files).join(', ')}`);
  return files[key] as Uint8Array;
}

const recordOf = (files: Files) =>
  JSON.parse(Buffer.from(fileEnding(files, 'capture.json')).toString()) as CaptureRecord;
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Every URL `site` served, under the origin the page named it by (`origin`). */
const served = (site: TestSite, origin = site.origin) =>
  site.requests.filter((p) => p !== '/favicon.ico').map((p) => `${origin}${p}`);

describe('web capture provenance: every origin, every name, every block, a summary page', () => {
  let t: TestService;
  let ca: TestCa;
  let main: TestSite;
  let cdn: TestSite;
  let leaf: TestSite;
  let framed: TestSite;
  let entry: TestSite;
  let many: TestSite[] = [];
  let token: string;

  beforeAll(async () => {
    ca = await createTestCa();
    const tls = { certPem: ca.chainPem, keyPem: ca.keyPem };
    const png = (rgb: [number, number, number], w = 8, h = 8): http.RequestListener => {
      const body = solidPng(w, h, rgb);
      return (_req, res) => {
        res.setHeader('content-type', 'image/png');
        res.end(body);
      };
    };
    const pixel = png([0, 128, 0]);
    const lazy = png(LAZY, 200, 100);
    cdn = await startSite((req, res) => {
      if (req.url === '/lazy.png') return lazy(req, res);
      if (req.url === '/lazy-text') {
        res.setHeader('content-type', 'text/plain');
        res.setHeader('access-control-allow-origin', '*');
        res.end('Lazy text arrived');
        return;
      }
      pixel(req, res);
    }, tls);
    // Under the same private root, but sending only its leaf: trusted only through an anchor.
    leaf = await startSite(
      (req, res) => {
        if (req.url === '/leaf-page') {
          res.setHeader('content-type', 'text/html');
          res.end('<!doctype html><title>Leaf only</title><p>Served with the leaf alone</p>');
          return;
        }
        pixel(req, res);
      },
      { certPem: ca.certPem, keyPem: ca.keyPem },
    );
    framed = await startSite((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><p>Framed text</p>');
    }, tls);
    for (let i = 0; i < MANY; i++) many.push(await startSite(pixel, tls));
    main = await startSite((req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      if (req.url === '/many') {
        res.end(
          `<!doctype html><title>Many origins</title>${many.map((s) => `<img src="${s.origin}/p.png" width="2" height="2">`).join('')}`,
        );
        return;
      }
      res.end(`<!doctype html><html><head><title>Provenance test page</title></head><body>
        <h1>Evidence</h1>
        <img src="${cdn.origin}/pixel.png" width="8" height="8">
        <img src="${leaf.origin}/leaf.png" width="8" height="8">
        <iframe src="https://localhost:${framed.port}/" width="300" height="80"></iframe>
        <img src="http://10.0.0.1/x.png"><img src="http://169.254.169.254/latest/x.png">
        <img src="http://localhost:${main.port}/refused.png">
        <script>const p = document.createElement('p'); p.textContent = 'Added by script'; document.body.append(p);</script>
        <div style="height: 3000px">tall</div>
        <div id="lazy">waiting</div>
        <script>
          new IntersectionObserver((entries, observer) => {
            if (!entries.some((e) => e.isIntersecting)) return;
            observer.disconnect();
            fetch('${cdn.origin}/lazy-text').then((r) => r.text()).then((text) => {
              const el = document.getElementById('lazy');
              el.textContent = text;
              const img = new Image(200, 100);
              img.src = '${cdn.origin}/lazy.png';
              el.after(img);
            });
          }).observe(document.getElementById('lazy'));
        </script></body></html>`);
    }, tls);
    entry = await startSite((req, res) => {
      res.writeHead(302, { location: `${main.origin}/page` }).end();
      void req;
    });
    t = await startTestService('pglite', {
      CHROMIUM_PATH: CHROMIUM,
      // localhost only at the framed site's port: the page's other use of it is refused by what it resolves to.
      CAPTURE_ALLOW_HOSTS: `127.0.0.1,localhost:${framed.port}`,
      CAPTURE_CA_CERTS: ca.caPath,
      CAPTURE_EGRESS_IP: EGRESS_IP,
      // Room for the many-origins page on a machine busy with other suites: what is tested is that it ends
      // within the bound it is given, whole.
      CAPTURE_TIMEOUT_MS: String(TIMEOUT_MS),
      RATE_LIMITS: 'off',
    });
    token = await t.token(freshEmail('provenance'));
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await Promise.all([main, cdn, leaf, framed, entry, ...many].map((s) => s?.close()));
    many = [];
    await ca?.close();
  });

  it('records each origin TLS, each name answer, each block and its rule, the summary page, the lazy content', async () => {
    const requested = `${entry.origin}/start`;
    const res = await capture(t, token, requested);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const wacz = await downloadWacz(t, token, res.body.id);
    const files = unzipSync(wacz);
    const record = recordOf(files);
    const framedOrigin = `https://localhost:${framed.port}`;

    // TLS of every origin, the iframe's (another site: another renderer process) included.
    const origins = new Map((record.tlsOrigins ?? []).map((o) => [o.origin, o]));
    expect([...origins.keys()].sort()).toEqual([main.origin, cdn.origin, leaf.origin, framedOrigin].sort());
    expect(record.tlsOriginsOmitted).toBe(0);
    for (const o of origins.values()) {
      expect(o.protocol, o.origin).toBe('TLS 1.3');
      expect(o.cipher, o.origin).toBeTruthy();
      expect(o.keyExchange, o.origin).toBeTruthy();
      expect(o.sha256Fingerprint, o.origin).toBe(ca.fingerprint);
      expect(o.chainLength, o.origin).toBe(2);
    }
    expect(record.tls?.sha256Fingerprint).toBe(ca.fingerprint);
    // The certificates themselves: leaf first, issued by the test root.
    const tlsJson = JSON.parse(Buffer.from(fileEnding(files, 'tls.json')).toString()) as {
      origins: Array<{ origin: string; chain: string[] }>;
    };
    expect(PROVENANCE_FILES.tls.endsWith('tls.json')).toBe(true);
    for (const o of tlsJson.origins) {
      const [leafCert, root] = o.chain.map((pem) => new X509Certificate(pem));
      expect(
        createHash('sha256')
          .update(leafCert?.raw ?? '')
          .digest('hex'),
        o.origin,
      ).toBe(ca.fingerprint);
      expect(root?.subject).toBe('CN=Notary Capture Test CA');
    }

    // Names: what localhost resolved to and the address connected to; refused where not allowed, unlisted.
    const dns = record.dns ?? [];
    const resolved = dns.find((d) => d.host === 'localhost' && d.outcome === 'resolved');
    expect(resolved?.addresses).toContain('127.0.0.1');
    expect(resolved?.connected).toEqual(['127.0.0.1']);
    expect(dns).toContainEqual(
      expect.objectContaining({ host: 'localhost', outcome: 'refused', addresses: [], connected: [] }),
    );

    // Blocked, each with its rule; the name's address withheld.
    expect(record.blocked).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ url: 'http://10.0.0.1/x.png', ip: '10.0.0.1', rule: 'private-range' }),
        expect.objectContaining({
          url: 'http://169.254.169.254/latest/x.png',
          ip: '169.254.169.254',
          rule: 'metadata-address',
        }),
        expect.objectContaining({
          url: `http://localhost:${main.port}/refused.png`,
          ip: null,
          rule: 'private-range',
        }),
      ]),
    );

    // The capture's own facts.
    expect(record.egressIp).toBe(EGRESS_IP);
    expect(record.service?.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(record.settings?.trustedCas).toEqual([
      { subject: 'CN=Notary Capture Test CA', sha256Fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/) },
    ]);

    // Lazy content: fetched once scrolled to, so in the archive, and shown in the screenshot.
    const cdx = Buffer.from(fileEnding(files, 'index.cdx')).toString();
    expect(cdx).toContain(`"url":"${cdn.origin}/lazy-text"`);
    expect(cdx).toContain(`"url":"${cdn.origin}/lazy.png"`);
    const screenshot = Buffer.from(fileEnding(files, 'screenshot.png'));
    expect(await countPixels(screenshot, LAZY)).toBeGreaterThan(200 * 100 * 0.9);

    // The summary page: a file listed in datapackage.json, a page of the archive, with its record in the WARC.
    const summary = Buffer.from(files[PROVENANCE_FILES.summary] ?? []).toString();
    const pkg = JSON.parse(Buffer.from(files['datapackage.json'] ?? []).toString()) as {
      resources: Array<{ path: string; hash: string }>;
    };
    expect(pkg.resources).toContainEqual(
      expect.objectContaining({
        path: PROVENANCE_FILES.summary,
        hash: `sha256:${sha256(Buffer.from(summary))}`,
      }),
    );
    expect(Buffer.from(files['pages/pages.jsonl'] ?? []).toString()).toContain(
      `"url":"${PROVENANCE_PAGE_URL}"`,
    );
    expect(cdx).toContain(`"url":"${PROVENANCE_PAGE_URL}"`);
    const pdf = fileEnding(files, 'page.pdf');
    for (const fact of [
      requested,
      `${main.origin}/page`,
      record.browser.version,
      record.userAgent,
      EGRESS_IP,
      framedOrigin,
      'metadata-address',
      cdn.origin,
      // The screenshot as rendered (the archive's copy carries capture.json besides) and the PDF.
      sha256(stripCaptureRecord(screenshot)),
      sha256(pdf),
    ]) {
      expect(summary, fact).toContain(fact.replaceAll('&', '&amp;'));
    }

    // The archive replays: every index line reads its record, every URL the sites served has one.
    const loaded = [
      ...served(entry),
      ...served(main),
      ...served(cdn),
      ...served(leaf),
      ...served(framed, framedOrigin),
    ];
    expect(await replayProblems(wacz, loaded)).toEqual([]);

    // The certificate states the main document's leaf and how many origins were recorded.
    const cert = await fetch(`${t.url}/api/documents/${res.body.id}/certificate?lang=en`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(cert.status).toBe(200);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'provenance-cert-'));
    try {
      const file = path.join(dir, 'certificate.pdf');
      await writeFile(file, Buffer.from(await cert.arrayBuffer()));
      const text = (await exec('pdftotext', [file, '-'])).stdout.replace(/\s+/g, ' ');
      expect(text).toContain(ca.fingerprint);
      // Brasília time (its offset written out) and UTC.
      expect(text).toMatch(
        /valid from \d{4}-\d\d-\d\d \d\d:\d\d:\d\d Brasília time \(UTC\u2212\d\d:\d\d\) · \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC to \d{4}-\d\d-\d\d/,
      );
      expect(text).toContain('TLS connections of 4 origin(s) recorded');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('a server under the private root that sends only its leaf is captured: the root is a trust anchor', async () => {
    const res = await capture(t, token, `${leaf.origin}/leaf-page`);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const record = recordOf(unzipSync(await downloadWacz(t, token, res.body.id)));
    expect(record.title).toBe('Leaf only');
    expect(record.tls?.sha256Fingerprint).toBe(ca.fingerprint);
    // What Chromium verified: the leaf it was sent, then the anchor from the capture's trust store.
    expect(record.tlsOrigins?.[0]).toMatchObject({ origin: leaf.origin, chainLength: 2 });
  }, 60_000);

  it(
    `a page with ${MANY} origins captures within CAPTURE_TIMEOUT_MS; chains kept up to the bound`,
    async () => {
      const started = Date.now();
      const res = await capture(t, token, `${main.origin}/many`);
      const took = Date.now() - started;
      // 201, not 504: the capture process finished within CAPTURE_TIMEOUT_MS, which it enforces.
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const files = unzipSync(await downloadWacz(t, token, res.body.id));
      const record = recordOf(files);
      expect(record.tlsOrigins).toHaveLength(TLS_LIMITS.origins);
      expect(record.tlsOriginsOmitted).toBe(MANY + 1 - TLS_LIMITS.origins);
      expect(record.tlsOrigins?.every((o) => o.sha256Fingerprint === ca.fingerprint)).toBe(true);
      expect(record.servers.length).toBe(MANY + 1);
      const summary = files[PROVENANCE_FILES.summary] ?? new Uint8Array();
      expect(summary.length).toBeLessThanOrEqual(SUMMARY_MAX_BYTES);
      expect(Buffer.from(summary).toString()).toContain(
        `${MANY + 1 - TLS_LIMITS.origins} more past the bound, not kept`,
      );
      console.log(`[provenance] ${MANY + 1} origins captured in ${took} ms (bound ${TIMEOUT_MS} ms)`);
    },
    2 * TIMEOUT_MS,
  );
});

describe('web capture without CAPTURE_CA_CERTS', () => {
  it('a server under a private root is refused (ERR_CERT_AUTHORITY_INVALID), whatever chain it sends', async () => {
    const ca = await createTestCa();
    const page: http.RequestListener = (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><title>private</title><p>private</p>');
    };
    const leafOnly = await startSite(page, { certPem: ca.certPem, keyPem: ca.keyPem });
    const fullChain = await startSite(page, { certPem: ca.chainPem, keyPem: ca.keyPem });
    const t = await startTestService('pglite', {
      CHROMIUM_PATH: CHROMIUM,
      CAPTURE_ALLOW_HOSTS: '127.0.0.1',
      RATE_LIMITS: 'off',
    });
    try {
      const token = await t.token(freshEmail('untrusted'));
      for (const site of [leafOnly, fullChain]) {
        const res = await capture(t, token, `${site.origin}/`);
        expect(res.status, JSON.stringify(res.body)).toBe(502);
        expect(res.body.message).toContain('ERR_CERT_AUTHORITY_INVALID');
      }
    } finally {
      await t.close();
      await leafOnly.close();
      await fullChain.close();
      await ca.close();
    }
  }, 120_000);
});
