/**
 * Captures of loopback sites come out as signed WACZ files (Webrecorder's WACZ Signing and Verification
 * 0.1.0) that `notary-verify <capture.wacz>` accepts, in the domain form (SIGNING_CERT, a time signature from
 * the OpenSSL TSA) and in the anonymous form (the service's key in DATA_DIR), and that it refuses after one
 * changed byte in a WARC record, in datapackage.json or in the signature. A TSA that is down leaves the
 * capture signed without time signature, and capture.json and the certificate say so.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { ANONYMOUS_KEY_FILE } from '@notary/server/adapters/capture/service/wacz-signing';
import type { CaptureRecord } from '@notary/server/ports/capture';
import type { DocumentDto } from '@notary/shared';
import { runCli } from '@notary/verify/cli';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flipped, offsetOf } from '../harness/capture-record';
import { api } from '../harness/http';
import { createTestPki, type TestPki } from '../harness/pki';
import { startTestService, type TestService } from '../harness/service';
import { freshEmail } from '../harness/tenants';
import { startTestTsa, type TestTsa } from '../harness/tsa';
import { createTestCa, solidPng, startSite, type TestCa, type TestSite } from '../harness/web-site';

const exec = promisify(execFile);
const CHROMIUM = '/usr/bin/chromium';

/** A page with a stylesheet, an image and a script, and an image from a second (plain HTTP) origin. */
function siteHandler(other: () => string): http.RequestListener {
  const pixel = solidPng(8, 8, [0, 128, 0]);
  return (req, res) => {
    switch (req.url) {
      case '/page':
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end(`<!doctype html><html><head><title>Signed capture</title>
          <link rel="stylesheet" href="/style.css"></head>
          <body><h1>Evidence</h1><img src="/pixel.png" width="8" height="8">
          <img src="${other()}/other.png" width="8" height="8">
          <script>document.body.insertAdjacentHTML('beforeend', '<p id="added">Added by script</p>');</script>
          </body></html>`);
        return;
      case '/style.css':
        res.setHeader('content-type', 'text/css');
        res.end('h1 { color: rgb(10, 20, 30); }');
        return;
      case '/pixel.png':
      case '/other.png':
        res.setHeader('content-type', 'image/png');
        res.end(pixel);
        return;
      default:
        res.statusCode = 404;
        res.end('not found');
    }
  };
}

async function capture(t: TestService, token: string, url: string): Promise<DocumentDto> {
  const res = await api<DocumentDto>(t.url, '/api/documents/capture', {
    method: 'POST',
    token,
    body: { url, consent: true },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function download(t: TestService, token: string, id: string): Promise<Buffer> {
  const dl = await api<{ downloadUrl: string }>(t.url, `/api/documents/${id}/download`, { token });
  expect(dl.status).toBe(200);
  return Buffer.from(await (await fetch(dl.body.downloadUrl)).arrayBuffer());
}

/** The certificate's text (pdftotext), whitespace collapsed. */
async function certificateText(t: TestService, token: string, id: string, dir: string): Promise<string> {
  const res = await fetch(`${t.url}/api/documents/${id}/certificate?lang=en`, {
    headers: { authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  const file = path.join(dir, `${id}.pdf`);
  await writeFile(file, Buffer.from(await res.arrayBuffer()));
  return (await exec('pdftotext', [file, '-'])).stdout.replace(/\s+/g, ' ');
}

/** `notary-verify` on `bytes` written as a `.wacz` file. */
async function verifyFile(dir: string, name: string, bytes: Uint8Array, args: string[] = []) {
  const file = path.join(dir, `${name}.wacz`);
  await writeFile(file, bytes);
  return runCli([file, ...args]);
}

/**
 * The three tamperings a signed WACZ must reveal: a byte of the main page's WARC response record, of datapackage.json,
 * of the base64 signature. Each must fail `notary-verify` (exit 1).
 */
async function expectTamperingFails(dir: string, wacz: Uint8Array, pageUrl: string, args: string[]) {
  const files = unzipSync(wacz);
  const warc = files['archive/data.warc.gz'] ?? new Uint8Array();
  const line = Buffer.from(files['indexes/index.cdx'] ?? [])
    .toString()
    .split('\n')
    .map(
      (l) =>
        JSON.parse(l.slice(l.indexOf('{')) || '{}') as { url?: string; offset?: string; length?: string },
    )
    .find((l) => l.url === pageUrl);
  expect(line?.offset).toBeDefined();
  const recordAt = offsetOf(wacz, warc) + Number(line?.offset) + Math.floor(Number(line?.length) / 2);
  const inRecord = await verifyFile(dir, 'record', flipped(wacz, recordAt), args);
  expect(inRecord.code, inRecord.stdout).toBe(1);
  expect(inRecord.stdout).toMatch(/\[6\] WARC records against the index: FAILED/);
  expect(inRecord.stdout).toContain(pageUrl);

  const pkgAt = offsetOf(wacz, files['datapackage.json'] ?? new Uint8Array()) + 30;
  const inPackage = await verifyFile(dir, 'package', flipped(wacz, pkgAt), args);
  expect(inPackage.code, inPackage.stdout).toBe(1);
  expect(inPackage.stdout).toMatch(/\[2\] datapackage digest: FAILED/);

  const digest = JSON.parse(Buffer.from(files['datapackage-digest.json'] ?? []).toString()) as {
    signedData: { signature: string };
  };
  // One base64 character replaced by another: still base64, another signature.
  const sigAt = Buffer.from(wacz).indexOf(Buffer.from(digest.signedData.signature)) + 20;
  const changed = new Uint8Array(wacz);
  changed[sigAt] = changed[sigAt] === 0x41 ? 0x42 : 0x41;
  const inSignature = await verifyFile(dir, 'signature', changed, args);
  expect(inSignature.code, inSignature.stdout).toBe(1);
  expect(inSignature.stdout).toMatch(/\[3\] signature \(signedData\): FAILED/);
  expect(inSignature.stdout).toContain('signature over hash: invalid');
}

describe('signed web captures (WACZ Signing and Verification 0.1.0)', () => {
  let pki: TestPki;
  let tsa: TestTsa;
  let ca: TestCa;
  let site: TestSite;
  let other: TestSite;
  let dir: string;

  beforeAll(async () => {
    pki = await createTestPki();
    tsa = await startTestTsa(pki);
    ca = await createTestCa();
    other = await startSite(siteHandler(() => ''));
    site = await startSite(
      siteHandler(() => other.origin),
      { certPem: ca.chainPem, keyPem: ca.keyPem },
    );
    dir = await mkdtemp(path.join(os.tmpdir(), 'wacz-e2e-'));
  }, 120_000);
  afterAll(async () => {
    await site?.close();
    await other?.close();
    await ca?.close();
    await tsa?.stop();
    await pki?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  /** The service capturing the loopback sites (their CA trusted), with `env` added. */
  const startCapturing = (env: Record<string, string> = {}) =>
    startTestService('pglite', {
      CHROMIUM_PATH: CHROMIUM,
      CAPTURE_ALLOW_HOSTS: '127.0.0.1',
      CAPTURE_CA_CERTS: ca.caPath,
      ...env,
    });
  /** The signing certificate and key (EC, with its chain) and the test TSA trusted through the test PKI. */
  const domainSigning = () => ({
    SIGNING_CERT: pki.ec.chainPath,
    SIGNING_KEY: pki.ec.keyPath,
    TSA_URL: tsa.url,
    TSA_CA_CERTS: pki.caChainPath,
  });

  it('domain form: notary-verify accepts it, prints the capture facts, and refuses one changed byte', async () => {
    const t = await startCapturing({ SIGNING_LEVEL: 'B-T', ...domainSigning() });
    try {
      const token = await t.token(freshEmail('signed'));
      tsa.setMode('ok');
      const doc = await capture(t, token, `${site.origin}/page`);
      const wacz = await download(t, token, doc.id);
      expect(createHash('sha256').update(wacz).digest('hex')).toBe(doc.sha256Hash);
      const record = JSON.parse(
        Buffer.from(unzipSync(wacz)['capture/capture.json'] ?? []).toString(),
      ) as CaptureRecord;
      expect(record.signature).toMatchObject({
        form: 'domain',
        domain: 'Notary Test Signer',
        timeSignature: { status: 'included' },
      });

      const args = ['--trust-ca', pki.root.certPath, '--tsa-ca', pki.root.certPath];
      const ok = await verifyFile(dir, 'domain', wacz, args);
      expect(ok.code, ok.stdout + ok.stderr).toBe(0);
      expect(ok.stdout).toContain('VERIFIED');
      expect(ok.stdout).toContain(`final URL ${site.origin}/page (HTTP 200)`);
      expect(ok.stdout).toContain(`main document TLS certificate:`);
      expect(ok.stdout).toContain(record.tls?.sha256Fingerprint ?? 'no fingerprint');
      expect(ok.stdout).toContain('Signed (domain form) by Notary Test Signer');
      // Without the anchors the chains are not judged: incomplete (3), never verified.
      expect((await verifyFile(dir, 'domain-bare', wacz)).code).toBe(3);
      // Both origins' exchanges are in the archive and checked against the index.
      const json = await verifyFile(dir, 'domain-json', wacz, [...args, '--json']);
      const report = JSON.parse(json.stdout) as { checks: Array<{ id: number; summary: string }> };
      expect(report.checks.find((c) => c.id === 6)?.summary).toMatch(/^\d+ indexed records/);

      await expectTamperingFails(dir, wacz, `${site.origin}/page`, args);

      const text = await certificateText(t, token, doc.id, dir);
      expect(text).toContain(
        `The WACZ is signed (WACZ Signing and Verification 0.1.0) with the certificate of Notary Test Signer (SHA-256 ${createHash('sha256').update(pki.ec.certDer).digest('hex')}), with an RFC 3161 time signature from ${tsa.url}.`,
      );
    } finally {
      await t.close();
    }
  }, 180_000);

  it('a TSA down at capture time: still signed, without time signature; capture.json and the certificate say so', async () => {
    const t = await startCapturing({ SIGNING_LEVEL: 'B-B', ...domainSigning() });
    try {
      const token = await t.token(freshEmail('tsa-down'));
      tsa.setMode('fail-500');
      const doc = await capture(t, token, `${site.origin}/page`);
      tsa.setMode('ok');
      const wacz = await download(t, token, doc.id);
      const files = unzipSync(wacz);
      const digest = JSON.parse(Buffer.from(files['datapackage-digest.json'] ?? []).toString()) as {
        signedData: Record<string, string>;
      };
      expect(digest.signedData.signature).toBeTruthy();
      expect(digest.signedData.timeSignature).toBeUndefined();
      const record = JSON.parse(Buffer.from(files['capture/capture.json'] ?? []).toString()) as CaptureRecord;
      expect(record.signature?.timeSignature).toMatchObject({ status: 'unavailable', tsa: tsa.url });

      const ok = await verifyFile(dir, 'tsa-down', wacz, ['--trust-ca', pki.root.certPath]);
      expect(ok.code, ok.stdout).toBe(0);
      expect(ok.stdout).toMatch(/\[5\] time signature \(RFC 3161\): NOT RUN \(not applicable\)/);
      expect(ok.stdout).toContain('the TSA was unavailable at capture time');

      const text = await certificateText(t, token, doc.id, dir);
      expect(text).toContain(
        `without time signature: the time-stamping authority ${tsa.url} was unavailable at capture time`,
      );
    } finally {
      tsa.setMode('ok');
      await t.close();
    }
  }, 180_000);

  it('anonymous form: the key made once in DATA_DIR (0600); notary-verify accepts it and refuses one changed byte', async () => {
    const t = await startCapturing();
    try {
      expect((await stat(path.join(t.dataDir, ANONYMOUS_KEY_FILE))).mode & 0o777).toBe(0o600);
      const token = await t.token(freshEmail('anonymous'));
      const doc = await capture(t, token, `${site.origin}/page`);
      const wacz = await download(t, token, doc.id);
      const record = JSON.parse(
        Buffer.from(unzipSync(wacz)['capture/capture.json'] ?? []).toString(),
      ) as CaptureRecord;
      expect(record.signature?.form).toBe('anonymous');

      const ok = await verifyFile(dir, 'anonymous', wacz);
      expect(ok.code, ok.stdout + ok.stderr).toBe(0);
      expect(ok.stdout).toContain(
        `Signed (anonymous form) by the key with SHA-256 ${record.signature?.publicKeySha256}`,
      );
      await expectTamperingFails(dir, wacz, `${site.origin}/page`, []);

      const text = await certificateText(t, token, doc.id, dir);
      expect(text).toContain(`SHA-256 of its public key: ${record.signature?.publicKeySha256}`);
    } finally {
      await t.close();
    }
  }, 180_000);
});
