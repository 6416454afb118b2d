import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestCa,
  solidPng,
  startSite,
  type TestCa,
  type TestSite,
} from '../../../../../test/harness/web-site';
import { browserHome, certificatesOf, devToolsOf } from './chromium';
import {
  type OriginTlsDetail,
  summaryOf,
  TLS_LIMITS,
  type TlsLimits,
  TlsRecorder,
  tlsFile,
} from './provenance';

const CHROMIUM = '/usr/bin/chromium';

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
