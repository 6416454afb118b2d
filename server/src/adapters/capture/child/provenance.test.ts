import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testCaptureRecord } from '../../../../../test/harness/capture-record';
import {
  createTestCa,
  solidPng,
  startSite,
  type TestCa,
  type TestSite,
} from '../../../../../test/harness/web-site';
import type { CaptureRecord } from '../../../ports/capture';
import { browserHome, certificatesOf, devToolsOf } from './chromium';
import {
  type OriginTlsDetail,
  summaryOf,
  TLS_LIMITS,
  type TlsLimits,
  TlsRecorder,
  tlsFile,
} from './provenance';
import { renderProvenanceSummary, SUMMARY_MAX_BYTES } from './provenance-summary';
import { stripCaptureRecord, withCaptureRecord } from './screenshot-record';

const CHROMIUM = '/usr/bin/chromium';

/** A record as a capture makes it; `over` replaces fields. */
function record(over: Partial<CaptureRecord> = {}): CaptureRecord {
  return testCaptureRecord({
    requestedUrl: 'http://site.test/start',
    finalUrl: 'https://site.test/page',
    redirects: [{ url: 'http://site.test/start', status: 302, location: 'https://site.test/page' }],
    serverIp: '203.0.113.10',
    responseHeaders: [],
    userAgent: 'Mozilla/5.0 NotaryCapture/1.0',
    screenshot: { width: 1280, height: 900, truncated: false },
    title: 'A page',
    ...over,
  });
}

describe('TlsRecorder in Chromium: every origin, frames of other processes included', () => {
  let ca: TestCa;
  let full: TestSite;
  let leafOnly: TestSite;
  let framed: TestSite;
  let inFrame: TestSite;
  let browser: Browser;
  let home: string;

  beforeAll(async () => {
    ca = await createTestCa();
    const png = solidPng(4, 4, [0, 128, 0]);
    const image: Parameters<typeof startSite>[0] = (_req, res) => {
      res.setHeader('content-type', 'image/png');
      res.end(png);
    };
    // Sends only its leaf: trusted through the NSS database's anchor, as a capture trusts CAPTURE_CA_CERTS.
    leafOnly = await startSite(image, { certPem: ca.certPem, keyPem: ca.keyPem });
    inFrame = await startSite(image, { certPem: ca.chainPem, keyPem: ca.keyPem });
    // Another site (localhost, not 127.0.0.1): Chromium runs it in a process of its own.
    framed = await startSite(
      (_req, res) => {
        res.setHeader('content-type', 'text/html');
        res.end(`<p>framed</p><img src="https://127.0.0.1:${inFrame.port}/in-frame.png">`);
      },
      { certPem: ca.chainPem, keyPem: ca.keyPem },
    );
    full = await startSite(
      (_req, res) => {
        res.setHeader('content-type', 'text/html');
        res.end(
          `<p>main</p><img src="${leafOnly.origin}/leaf.png"><iframe src="https://localhost:${framed.port}/"></iframe>`,
        );
      },
      { certPem: ca.chainPem, keyPem: ca.keyPem },
    );
    const work = await mkdtemp(path.join(os.tmpdir(), 'notary-tls-test-'));
    home = await browserHome(work, certificatesOf(ca.chainPem).slice(1));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--disable-gpu'],
      env: { HOME: home, PATH: process.env.PATH ?? '' },
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await Promise.all([full?.close(), leafOnly?.close(), framed?.close(), inFrame?.close()]);
    await ca?.close();
    if (home) await rm(path.dirname(home), { recursive: true, force: true });
  });

  async function record(limits: TlsLimits = TLS_LIMITS) {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const recorder = new TlsRecorder(limits);
      await recorder.attach(devToolsOf(await context.newCDPSession(page)));
      context.on('response', (r) => {
        void r.securityDetails().then((d) => recorder.noteResponse(r.url(), d));
      });
      await page.goto(`${full.origin}/`, { waitUntil: 'load' });
      const framedPage = page.frames().find((f) => f.url().startsWith(`https://localhost:${framed.port}`));
      await framedPage?.waitForLoadState('load');
      return await recorder.finish(5_000);
    } finally {
      await context.close();
    }
  }

  it('records protocol, cipher, key exchange and the verified chain of each origin, the iframe of another process too', async () => {
    const { origins, omitted } = await record();
    expect(omitted).toBe(0);
    const byOrigin = new Map(origins.map((o) => [o.origin, o]));
    expect([...byOrigin.keys()].sort()).toEqual(
      [full.origin, leafOnly.origin, `https://localhost:${framed.port}`, inFrame.origin].sort(),
    );
    for (const o of origins) {
      expect(o.protocol, o.origin).toMatch(/^TLS 1\.[23]$/);
      expect(o.cipher, o.origin).toBeTruthy();
      expect(o.keyExchange, o.origin).toBeTruthy();
      expect(o.sha256Fingerprint, o.origin).toBe(ca.fingerprint);
      expect(o.subject, o.origin).toContain('CN=127.0.0.1');
      expect(o.issuer, o.origin).toContain('Notary Capture Test CA');
      expect(Date.parse(o.validTo)).toBeGreaterThan(Date.parse(o.validFrom));
      // The path Chromium verified: the leaf, then the anchor (also for the server that sent only its leaf).
      expect(o.chainLength, o.origin).toBe(2);
      const [leaf, anchor] = o.chain.map((pem) => new X509Certificate(pem));
      expect(leaf?.subject).toContain('CN=127.0.0.1');
      expect(anchor?.subject).toBe('CN=Notary Capture Test CA');
      expect(leaf?.checkIssued(anchor as X509Certificate)).toBe(true);
    }
    // capture.json's summary leaves the material out; tls.json keeps it.
    const first = origins[0] as OriginTlsDetail;
    expect(summaryOf(first)).not.toHaveProperty('chain');
    const file = JSON.parse(tlsFile(origins, omitted).toString()) as { origins: OriginTlsDetail[] };
    expect(file.origins[0]?.chain).toEqual(first.chain);
  });

  it('keeps the chains within their byte budget: whole, then the leaf alone, then none', async () => {
    const leafBytes = new X509Certificate(ca.certPem).raw.length;
    const rootBytes = (certificatesOf(ca.chainPem)[1] as X509Certificate).raw.length;
    const { origins } = await record({ ...TLS_LIMITS, chainBytes: 2 * leafBytes + rootBytes });
    expect(origins.map((o) => o.chainLength)).toEqual([2, 1, 0, 0]);
    expect(origins.map((o) => o.chain.length)).toEqual([2, 1, 0, 0]);
    // Without its certificate an origin still has what Chromium said of its connection.
    expect(origins[3]?.protocol).toMatch(/^TLS/);
    expect(origins[3]?.sha256Fingerprint).toBeNull();
  });

  it('keeps the first origins up to the bound and counts the rest', async () => {
    const { origins, omitted } = await record({ ...TLS_LIMITS, origins: 2 });
    expect(origins).toHaveLength(2);
    expect(origins[0]?.origin).toBe(full.origin);
    expect(omitted).toBe(2);
  });
});

describe('provenance summary', () => {
  const files = {
    screenshot: { sha256: 'a'.repeat(64), bytes: 1234 },
    pdf: { sha256: 'b'.repeat(64), bytes: 5678 },
  };

  it('states the capture: URLs, redirects, times, software, settings, egress address, TLS, names, blocks, hashes', () => {
    const html = renderProvenanceSummary(
      record({
        egressIp: '198.51.100.7',
        service: { name: 'Notary', version: '0.1.0' },
        settings: {
          timeoutMs: 30_000,
          scroll: { maxSteps: 60, maxMs: 10_000 },
          screenshotMaxHeight: 16_384,
          allowExceptions: 1,
          trustedCas: [{ subject: 'CN=Intranet Root', sha256Fingerprint: 'c'.repeat(64) }],
        },
        tlsOrigins: [
          {
            origin: 'https://site.test',
            protocol: 'TLS 1.3',
            cipher: 'AES_128_GCM',
            keyExchange: 'X25519',
            subject: 'CN=site.test',
            issuer: 'CN=Some CA',
            validFrom: '2026-01-01T00:00:00.000Z',
            validTo: '2026-04-01T00:00:00.000Z',
            sha256Fingerprint: 'd'.repeat(64),
            chainLength: 3,
            scts: 2,
            ctCompliance: 'compliant',
          },
        ],
        dns: [
          {
            host: 'site.test',
            outcome: 'resolved',
            addresses: ['203.0.113.10', '2001:db8::1'],
            connected: ['203.0.113.10'],
            at: '2026-01-02T03:04:05.100Z',
          },
          {
            host: 'intranet.test',
            outcome: 'refused',
            addresses: [],
            connected: [],
            at: '2026-01-02T03:04:06.000Z',
          },
        ],
        blocked: [
          {
            url: 'http://169.254.169.254/',
            ip: '169.254.169.254',
            reason: 'the destination is not a public address',
            rule: 'metadata-address',
          },
        ],
        unfinished: ['https://site.test/stream'],
      }),
      files,
    ).toString();
    for (const fact of [
      'http://site.test/start',
      'https://site.test/page',
      '2026-01-02T03:04:05.000Z',
      '2026-01-02T03:04:09.000Z',
      'Notary 0.1.0',
      'Chromium 156.0.0.0',
      'Mozilla/5.0 NotaryCapture/1.0',
      '1280 × 800',
      '198.51.100.7',
      'CN=Intranet Root',
      'TLS 1.3, AES_128_GCM, X25519',
      'd'.repeat(64),
      '203.0.113.10, 2001:db8::1',
      'not public: not listed',
      'metadata-address',
      'https://site.test/stream',
      'a'.repeat(64),
      'b'.repeat(64),
    ]) {
      expect(html, fact).toContain(fact);
    }
    expect(html).not.toContain('<script');
  });

  it('escapes what the page and its servers chose (title, URLs, certificate names)', () => {
    const html = renderProvenanceSummary(
      record({
        title: '<script>alert(1)</script>',
        finalUrl: 'https://site.test/"><img src=x onerror=alert(1)>',
        tlsOrigins: [
          {
            origin: 'https://site.test',
            protocol: null,
            cipher: null,
            keyExchange: null,
            subject: 'CN=<b>bold</b>',
            issuer: "O='quoted'",
            validFrom: '',
            validTo: '',
            sha256Fingerprint: null,
            chainLength: 0,
            scts: 0,
            ctCompliance: null,
          },
        ],
      }),
      { ...files, pdf: undefined },
    ).toString();
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<img src=x');
    expect(html).not.toContain('<b>bold');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('&#39;quoted&#39;');
    expect(html).toContain('not produced');
  });

  it(`stays within ${SUMMARY_MAX_BYTES} bytes, saying how many rows it leaves out`, () => {
    const blocked = Array.from({ length: 20_000 }, (_, i) => ({
      url: `http://10.0.${i % 256}.${i % 250}/${'x'.repeat(300)}`,
      ip: '10.0.0.1',
      reason: 'the destination is not a public address',
      rule: 'private-range' as const,
    }));
    const html = renderProvenanceSummary(record({ blocked, unfinished: ['https://site.test/late'] }), files);
    expect(html.length).toBeLessThanOrEqual(SUMMARY_MAX_BYTES);
    expect(html.toString()).toMatch(/\d+ more not shown here: capture\.json lists them all\./);
    // What follows the cut table is still there, and the page is whole.
    expect(html.toString()).toContain('https://site.test/late');
    expect(html.toString().trimEnd()).toMatch(/<\/html>$/);
  });

  it('the screenshot without its record chunk is the image as rendered, byte for byte', () => {
    const png = solidPng(3, 2, [1, 2, 3]);
    const withRecord = withCaptureRecord(png, record());
    expect(withRecord.equals(png)).toBe(false);
    expect(stripCaptureRecord(withRecord).equals(png)).toBe(true);
    expect(stripCaptureRecord(png).equals(png)).toBe(true);
  });
});
