/**
 * Web captures for tests: a capture record as the capturer writes it, and the one-byte changes a tampering
 * test makes to a capture's archive (a zip).
 */
import type { CaptureRecord } from '@notary/server/ports/capture';

/**
 * A capture record (format `notary-web-capture/1`) of `https://example.test/page`: status 200 from
 * 93.184.215.14 without redirects, TLS or anything blocked, failed or unfinished, captured on
 * 2026-01-02 from 03:04:05 to 03:04:09 UTC by Chromium 156.0.0.0 at 1280 x 800 (the whole screenshot), titled
 * "Evidence". `over` replaces whole fields.
 */
export function testCaptureRecord(over: Partial<CaptureRecord> = {}): CaptureRecord {
  return {
    format: 'notary-web-capture/1',
    requestedUrl: 'https://example.test/page',
    finalUrl: 'https://example.test/page',
    status: 200,
    redirects: [],
    serverIp: '93.184.215.14',
    tls: null,
    responseHeaders: [['content-type', 'text/html']],
    servers: [],
    blocked: [],
    failed: [],
    unfinished: [],
    startedAt: '2026-01-02T03:04:05.000Z',
    finishedAt: '2026-01-02T03:04:09.000Z',
    browser: { name: 'Chromium', version: '156.0.0.0' },
    userAgent: 'test',
    locale: 'en-US',
    timezone: 'UTC',
    viewport: { width: 1280, height: 800 },
    screenshot: { width: 1280, height: 800, truncated: false },
    title: 'Evidence',
    ...over,
  };
}

/** A copy of `bytes` with the lowest bit of the byte at `at` inverted. */
export function flipped(bytes: Uint8Array, at: number): Uint8Array {
  const out = new Uint8Array(bytes);
  out[at] = (out[at] ?? 0) ^ 0x01;
  return out;
}

/**
 * Where `part` (a zip entry's stored bytes, found by their first 256 bytes) starts in `zip`.
 * @throws when it is not there past the zip's first byte.
 */
export function offsetOf(zip: Uint8Array, part: Uint8Array): number {
  const at = Buffer.from(zip).indexOf(Buffer.from(part.subarray(0, Math.min(part.length, 256))));
  if (at <= 0) throw new Error(`the entry's bytes are not in the zip (found at ${at})`);
  return at;
}
