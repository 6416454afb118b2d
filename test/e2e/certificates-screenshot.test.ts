import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { bandedPng, bombPng, hugeDeclaredPng } from '@notary/pdf/hostile-pngs.testing';
import { screenshotDecodes } from '@notary/pdf/png';
import { CAPTURE_VIEWPORT, SCREENSHOT_MAX_HEIGHT } from '@notary/server/adapters/capture/child/chromium';
import { withCaptureRecord } from '@notary/server/adapters/capture/service/screenshot-record';
import { Document } from '@notary/server/db/entities';
import type { CaptureRecord } from '@notary/server/ports/capture';
import { CAPTURE_SCREENSHOT, type DocumentDto, SCREENSHOT_MAX_PIXELS } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testCaptureRecord } from '../harness/capture-record';
import { FIXTURES_DIR } from '../harness/fixtures';
import { uploadFile } from '../harness/http';
import { createTestPki, type TestPki } from '../harness/pki';
import { startTestService, type TestService } from '../harness/service';

/**
 * A web capture's certificate through the real service (PGlite, PKCS#12 key): the screenshot is decoded in the
 * bounded stamping worker, never on the service's own thread (this test's: the service runs in-process). The
 * largest screenshot a capture makes (1280 x 16384) is shown; one declaring 100000 x 100000 pixels and a
 * decompression bomb are left out with a sentence saying where the screenshot is; each certificate is signed
 * and sound (qpdf --check, pdfsig).
 */

const exec = promisify(execFile);
const MIB = 1024 * 1024;

/** A capture record as the capturer writes it (what the certificate states comes from here). */
function record(): CaptureRecord {
  return testCaptureRecord({
    requestedUrl: 'https://example.com/long',
    finalUrl: 'https://example.com/long',
    missingBodies: [],
    startedAt: '2026-11-26T10:00:00.000Z',
    finishedAt: '2026-11-26T10:00:04.000Z',
    userAgent: 'Mozilla/5.0',
    screenshot: { width: 1280, height: 16384, truncated: true },
    title: 'A long page',
  });
}

describe('a web capture certificate with a hostile or huge screenshot (PGlite, PKCS#12 key)', () => {
  let pki: TestPki;
  let t: TestService;
  let token: string;
  let work: string;

  beforeAll(async () => {
    work = await mkdtemp(path.join(os.tmpdir(), 'notary-cert-screenshot-'));
    pki = await createTestPki();
    t = await startTestService('pglite', {
      SIGNING_CERT: pki.rsa.p12Path,
      SIGNING_CERT_PASSWORD: pki.p12Password,
    });
    token = await t.token('screenshots@example.com');
  });

  afterAll(async () => {
    await t?.close();
    await pki?.dispose();
    await rm(work, { recursive: true, force: true });
  });

  /** A document of the caller's workspace turned into a web capture whose stored screenshot is `png`. */
  async function webCapture(png: Buffer): Promise<DocumentDto> {
    const up = await uploadFile(t.url, token, path.join(FIXTURES_DIR, 'files', 'contrato.txt'));
    expect(up.status).toBe(201);
    const doc = up.body as unknown as DocumentDto;
    const screenshotKey = `screenshots/${randomUUID()}.png`;
    await t.service.deps.storage.put(screenshotKey, Readable.from([withCaptureRecord(png, record())]));
    await t.service.deps.db
      .fork()
      .nativeUpdate(
        Document,
        { id: doc.id },
        { sourceType: 'web-capture', sourceUri: 'https://example.com/long', screenshotKey },
      );
    return doc;
  }

  it('the pixel cap is the largest screenshot the capturer takes', () => {
    expect(CAPTURE_SCREENSHOT.width).toBe(CAPTURE_VIEWPORT.width);
    expect(CAPTURE_SCREENSHOT.maxHeight).toBe(SCREENSHOT_MAX_HEIGHT);
    expect(SCREENSHOT_MAX_PIXELS).toBe(
      CAPTURE_VIEWPORT.width * SCREENSHOT_MAX_HEIGHT * CAPTURE_SCREENSHOT.deviceScaleFactor ** 2,
    );
  });

  it.each([
    ['the largest screenshot a capture makes (1280 x 16384)', () => bandedPng(1280, 16384), 'shown'],
    ['a screenshot declaring 100000 x 100000 pixels', () => hugeDeclaredPng(100_000, 100_000), 'too large'],
    [
      'a decompression bomb (1280 x 16384 declared, 512 MiB of data)',
      () => bombPng(1280, 16384, 512 * MIB),
      'unreadable',
    ],
  ])(
    '%s: a signed, sound certificate; never decoded on the service thread',
    async (_, make, expected) => {
      const doc = await webCapture(await make());
      const before = screenshotDecodes();
      // The event-loop probe: turns of the service's loop while it renders (it runs on this thread).
      let turns = 0;
      let probing = true;
      const probe = () => {
        turns += 1;
        if (probing) setImmediate(probe);
      };
      setImmediate(probe);
      const res = await fetch(`${t.url}/api/documents/${doc.id}/certificate?signed=1&lang=en`, {
        headers: { authorization: `Bearer ${token}` },
      }).finally(() => {
        probing = false;
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-service-signed')).toBe('pades');
      const file = path.join(work, `${doc.id}.pdf`);
      await writeFile(file, Buffer.from(await res.arrayBuffer()));
      expect(turns).toBeGreaterThan(0);
      expect(screenshotDecodes()).toBe(before);

      const qpdf = await exec('qpdf', ['--check', file]);
      expect(qpdf.stdout).toContain('No syntax or stream encoding errors found');
      const sig = await exec('pdfsig', ['-nssdir', `sql:${pki.nssDir}`, file]);
      expect(sig.stdout).toContain('Signature Validation: Signature is Valid.');
      const text = (await exec('pdftotext', [file, '-'])).stdout.replace(/\s+/g, ' ');
      expect(text).toContain('Web capture of https://example.com/long');
      expect(text).toContain(doc.sha256Hash);
      const images = (await exec('pdfimages', ['-list', file])).stdout;
      if (expected === 'shown') {
        expect(images).toMatch(/^\s*1\s+0\s+image\s+1280\s+16384\s+rgb\s/m);
        expect(text).toContain('Screenshot of the page as captured (top part');
      } else {
        expect(images).not.toMatch(/\bimage\b\s+\d/);
        const where =
          'It is in the registered WACZ archive, covered by the SHA-256 above: the integrity of the capture is not affected.';
        expect(text).toContain(where);
        expect(text).toContain(
          expected === 'too large'
            ? 'The screenshot of the page (100000 × 100000 pixels) is too large to show on this certificate.'
            : 'The screenshot of the page could not be shown on this certificate.',
        );
      }
    },
    120_000,
  );
});
