import { describe, expect, it } from 'vitest';
import { testCaptureRecord } from '../../../../../test/harness/capture-record';
import { solidPng } from '../../../../../test/harness/web-site';
import type { CaptureRecord } from '../../../ports/capture';
import { renderProvenanceSummary, SUMMARY_MAX_BYTES } from './provenance-summary';
import { stripCaptureRecord, withCaptureRecord } from './screenshot-record';

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
