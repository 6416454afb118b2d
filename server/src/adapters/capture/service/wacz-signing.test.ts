/**
 * Signed capture archives (WACZ Signing and Verification 0.1.0): the parts the capture process writes are
 * packed into a WACZ and signed by the service in both of the spec's forms, read back by the verifier (`verifyWacz`),
 * by OpenSSL (`openssl ts -verify` of the time signature) and as ReplayWeb.page checks an anonymous signature
 * (WebCrypto, P-384, raw r || s); the TSA down still gives a signed archive that says so; one changed byte in
 * a WARC record, in datapackage.json or in the signature fails verification.
 */
import { execFile } from 'node:child_process';
import { createHash, generateKeyPairSync, webcrypto } from 'node:crypto';
import { mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { silentLog } from '@notary/platform/log';
import { verifyWacz, type WaczReport } from '@notary/verify/wacz';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flipped, offsetOf, testCaptureRecord } from '../../../../../test/harness/capture-record';
import { createTestPki, type TestPki } from '../../../../../test/harness/pki';
import { startTestTsa, type TestTsa } from '../../../../../test/harness/tsa';
import { solidPng } from '../../../../../test/harness/web-site';
import type { CaptureRecord, WebCapture } from '../../../ports/capture';
import { loadFileSigner } from '../../signer/file';
import { HttpTimestampAuthority } from '../../tsa/http';
import { tlsFile } from '../child/provenance';
import { type HarEntry, writeWarcFiles } from '../child/warc';
import { CAPTURE_FILES } from '../process-protocol';
import { assembleWacz, type CaptureParts } from './archive';
import { readCaptureRecord } from './screenshot-record';
import { WACZ_PATHS } from './wacz-layout';
import { ANONYMOUS_KEY_FILE, anonymousKey, createWaczSigner, type WaczSigner } from './wacz-signing';

const exec = promisify(execFile);
const O = 'https://example.test';

function exchange(url: string, body: string): HarEntry {
  return {
    startedDateTime: '2026-01-02T03:04:05.000Z',
    request: { method: 'GET', url, httpVersion: 'HTTP/1.1', headers: [{ name: 'Accept', value: '*/*' }] },
    response: {
      status: 200,
      statusText: 'OK',
      httpVersion: 'HTTP/1.1',
      headers: [{ name: 'Content-Type', value: 'text/html' }],
      content: { size: body.length, mimeType: 'text/html', text: body },
    },
  };
}

/** A capture's parts as the capture process leaves them in `dir` (`writeWarcFiles`, a PDF, `tls.json`). */
async function partsIn(dir: string): Promise<CaptureParts & { disposed: () => boolean }> {
  const record = testCaptureRecord({ browser: { name: 'Chromium', version: '156' } });
  const sizes = await writeWarcFiles(dir, {
    entries: [exchange(`${O}/page`, '<h1>Evidence</h1>'), exchange(`${O}/app.js`, 'document.title = 1;')],
    addressOf: () => '93.184.215.14',
    software: 'Notary test',
  });
  const pdfPath = path.join(dir, CAPTURE_FILES.pdf);
  await writeFile(pdfPath, '%PDF-1.7 test');
  const warc = await open(path.join(dir, CAPTURE_FILES.warc));
  const pdf = await open(pdfPath);
  let disposed = false;
  return {
    record,
    screenshot: solidPng(4, 4, [255, 0, 255]),
    index: await readFile(path.join(dir, CAPTURE_FILES.index)),
    tls: tlsFile([], 0),
    warc: { file: warc, bytes: sizes.warc },
    pdf: { file: pdf, bytes: (await stat(pdfPath)).size },
    dispose: async () => {
      disposed = true;
      await warc.close();
      await pdf.close();
    },
    disposed: () => disposed,
  };
}

/** Signs a fresh capture with `signer`; returns the signed WACZ's bytes and the capture as kept. */
async function signed(signer: WaczSigner): Promise<{ wacz: Uint8Array; kept: WebCapture }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'wacz-signing-'));
  const parts = await partsIn(dir);
  const kept = await assembleWacz(parts, signer, { software: 'Notary test', log: silentLog });
  await parts.dispose();
  const chunks: Buffer[] = [];
  for await (const chunk of kept.openWacz()) chunks.push(chunk as Buffer);
  const wacz = new Uint8Array(Buffer.concat(chunks));
  expect(wacz.length).toBe(kept.waczBytes);
  await kept.dispose();
  await rm(dir, { recursive: true, force: true });
  return { wacz, kept };
}

function digestOf(wacz: Uint8Array): { hash: string; signedData: Record<string, string> } {
  return JSON.parse(Buffer.from(unzipSync(wacz)[WACZ_PATHS.digest] ?? []).toString());
}

const status = (report: WaczReport) => report.checks.map((c) => [c.id, c.status]);

describe('WACZ signing: the anonymous form', () => {
  let dataDir: string;
  let signer: WaczSigner;
  let wacz: Uint8Array;
  let kept: WebCapture;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'wacz-data-'));
    signer = await createWaczSigner({
      signer: undefined,
      tsa: undefined,
      tsaUrl: undefined,
      dataDir,
      software: 'Notary test',
    });
    ({ wacz, kept } = await signed(signer));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('makes the key once, ECDSA P-384, in DATA_DIR with mode 0600, and keeps it', async () => {
    const file = path.join(dataDir, ANONYMOUS_KEY_FILE);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const before = await readFile(file, 'utf8');
    const again = await anonymousKey(dataDir);
    expect(await readFile(file, 'utf8')).toBe(before);
    expect(again.asymmetricKeyDetails?.namedCurve).toBe('secp384r1');
    // A key of another curve in its place is refused, naming the file.
    const other = path.join(dataDir, 'other');
    await anonymousKey(other);
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    await writeFile(
      path.join(other, ANONYMOUS_KEY_FILE),
      privateKey.export({ type: 'pkcs8', format: 'pem' }),
    );
    await expect(anonymousKey(other)).rejects.toThrow(/wacz-signing-key\.pem: not an ECDSA P-384 key/);
  });

  it('writes datapackage-digest.json as the spec shows it, and ReplayWeb.page would accept the signature', async () => {
    const files = unzipSync(wacz);
    const datapackage = files[WACZ_PATHS.datapackage] ?? new Uint8Array();
    const d = digestOf(wacz);
    expect(d.hash).toBe(`sha256:${createHash('sha256').update(datapackage).digest('hex')}`);
    expect(Object.keys(d.signedData).sort()).toEqual(
      ['created', 'hash', 'publicKey', 'signature', 'software', 'version'].sort(),
    );
    expect(d.signedData.hash).toBe(d.hash);
    // py-wacz compares the package's created with the signature's.
    expect(JSON.parse(Buffer.from(datapackage).toString()).created).toBe(d.signedData.created);
    expect(d.signedData.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // As webrecorder/wabac.js checks it: SPKI imported as P-384, raw r || s, SHA-256 over the hash string.
    const key = await webcrypto.subtle.importKey(
      'spki',
      Buffer.from(d.signedData.publicKey ?? '', 'base64'),
      { name: 'ECDSA', namedCurve: 'P-384' },
      false,
      ['verify'],
    );
    const ok = await webcrypto.subtle.verify(
      { name: 'ECDSA', hash: 'SHA-256' },
      key,
      Buffer.from(d.signedData.signature ?? '', 'base64'),
      new TextEncoder().encode(d.hash),
    );
    expect(ok).toBe(true);
  });

  it('states the signature in capture.json and in the screenshot the certificate reads', () => {
    const files = unzipSync(wacz);
    const record = JSON.parse(Buffer.from(files[WACZ_PATHS.record] ?? []).toString()) as CaptureRecord;
    expect(record.signature).toEqual(signer.facts);
    expect(record.signature?.timeSignature).toEqual({ status: 'not-applicable' });
    expect(Buffer.from(files[WACZ_PATHS.screenshot] ?? []).equals(kept.screenshot)).toBe(true);
    expect(readCaptureRecord(kept.screenshot)?.signature).toEqual(signer.facts);
    expect(kept.record.signature).toEqual(signer.facts);
  });

  it('is accepted by the verifier, every record against the index', async () => {
    const report = await verifyWacz(wacz);
    expect(status(report)).toEqual([
      [1, 'passed'],
      [2, 'passed'],
      [3, 'passed'],
      [4, 'not-run'],
      [5, 'not-run'],
      [6, 'passed'],
      [7, 'passed'],
    ]);
    expect(report.outcome).toBe('passed');
    expect(report.archive.form).toBe('anonymous');
    expect(report.archive.signer).toBe(signer.facts.publicKeySha256);
    expect(report.capture?.finalUrl).toBe(`${O}/page`);
  });

  it('fails verification after one changed byte in a WARC record, in datapackage.json, in the signature', async () => {
    const files = unzipSync(wacz);
    const warc = files[WACZ_PATHS.warc] ?? new Uint8Array();
    const cdx = Buffer.from(files[WACZ_PATHS.index] ?? []).toString();
    const line = JSON.parse(cdx.split('\n')[0]?.slice(cdx.indexOf('{')) ?? '{}') as { offset: string };
    const warcAt = offsetOf(wacz, warc);

    const record = await verifyWacz(flipped(wacz, warcAt + Number(line.offset) + 30));
    expect(record.outcome).toBe('failed');
    expect(record.checks.find((c) => c.id === 1)?.status).toBe('failed');
    const six = record.checks.find((c) => c.id === 6);
    expect(six?.status).toBe('failed');
    expect(six?.evidence.find((e) => e.ok === false)?.value).toMatch(/^recordDigest sha256:/);

    const pkg = await verifyWacz(
      flipped(wacz, offsetOf(wacz, files[WACZ_PATHS.datapackage] ?? new Uint8Array()) + 40),
    );
    expect(pkg.outcome).toBe('failed');
    expect(pkg.checks.find((c) => c.id === 2)?.status).toBe('failed');

    // One base64 character of the signature replaced by another: still base64, another signature.
    const sig = digestOf(wacz).signedData.signature ?? '';
    const sigAt = Buffer.from(wacz).indexOf(Buffer.from(sig)) + 10;
    const changed = new Uint8Array(wacz);
    changed[sigAt] = changed[sigAt] === 0x41 ? 0x42 : 0x41;
    const signature = await verifyWacz(changed);
    expect(signature.outcome).toBe('failed');
    expect(signature.failedAt).toBe(3);
  });
});

describe('WACZ signing: the domain form with a time signature', () => {
  let pki: TestPki;
  let tsa: TestTsa;
  let signer: WaczSigner;
  let dir: string;

  beforeAll(async () => {
    pki = await createTestPki();
    tsa = await startTestTsa(pki);
    dir = await mkdtemp(path.join(os.tmpdir(), 'wacz-domain-'));
    signer = await createWaczSigner({
      signer: await loadFileSigner({ keyPem: pki.ec.keyPem, chainPem: pki.ec.chainPem }),
      tsa: new HttpTimestampAuthority({ url: tsa.url, trustedCertificates: [pki.root.certDer] }),
      tsaUrl: tsa.url,
      dataDir: dir,
      software: 'Notary test',
    });
  }, 60_000);
  afterAll(async () => {
    await tsa.stop();
    await pki.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it('signs with the certificate and an RFC 3161 time signature OpenSSL verifies; notary-verify accepts it', async () => {
    tsa.setMode('ok');
    const { wacz } = await signed(signer);
    const d = digestOf(wacz).signedData;
    expect(Object.keys(d).sort()).toEqual(
      [
        'created',
        'domain',
        'domainCert',
        'hash',
        'signature',
        'software',
        'timeSignature',
        'timestampCert',
        'version',
      ].sort(),
    );
    expect(d.domain).toBe('Notary Test Signer');
    // ReplayWeb.page splits domainCert on blank lines.
    expect((d.domainCert ?? '').split('\n\n')).toHaveLength(3);
    await writeFile(path.join(dir, 'sig.txt'), d.signature ?? '');
    await writeFile(path.join(dir, 'time.tsr'), Buffer.from(d.timeSignature ?? '', 'base64'));
    await writeFile(path.join(dir, 'tsa-chain.pem'), d.timestampCert ?? '');
    const { stdout } = await exec('openssl', [
      'ts',
      '-verify',
      '-in',
      path.join(dir, 'time.tsr'),
      '-data',
      path.join(dir, 'sig.txt'),
      '-CAfile',
      pki.root.certPath,
      '-untrusted',
      path.join(dir, 'tsa-chain.pem'),
    ]);
    expect(stdout).toMatch(/Verification: OK/);

    const report = await verifyWacz(wacz, { trustCa: [pki.root.certDer], tsaCa: [pki.root.certDer] });
    expect(status(report)).toEqual([
      [1, 'passed'],
      [2, 'passed'],
      [3, 'passed'],
      [4, 'passed'],
      [5, 'passed'],
      [6, 'passed'],
      [7, 'passed'],
    ]);
    expect(report.archive.timeSignature).not.toBeNull();
    // Without anchors the chains are not judged: incomplete, never passed.
    const bare = await verifyWacz(wacz);
    expect(bare.outcome).toBe('incomplete');
    // Another root anchors nothing here.
    const other = await verifyWacz(wacz, { trustCa: [pki.otherRoot.certDer], tsaCa: [pki.root.certDer] });
    expect(other.failedAt).toBe(4);
  });

  it('signs without time signature when the TSA is down, and capture.json and the screenshot say so', async () => {
    tsa.setMode('fail-500');
    const { wacz, kept } = await signed(signer);
    tsa.setMode('ok');
    const d = digestOf(wacz).signedData;
    expect(d.timeSignature).toBeUndefined();
    expect(d.signature).toBeTruthy();
    const record = JSON.parse(
      Buffer.from(unzipSync(wacz)[WACZ_PATHS.record] ?? []).toString(),
    ) as CaptureRecord;
    expect(record.signature?.timeSignature).toMatchObject({ status: 'unavailable', tsa: tsa.url });
    expect(readCaptureRecord(kept.screenshot)?.signature?.timeSignature.status).toBe('unavailable');
    const report = await verifyWacz(wacz, { trustCa: [pki.root.certDer] });
    expect(report.outcome).toBe('passed');
    const five = report.checks.find((c) => c.id === 5);
    expect(five?.status).toBe('not-run');
    expect(five?.summary).toMatch(/TSA was unavailable/);
  });
});

describe('assembleWacz refuses parts the capture process does not write', () => {
  it('an index line outside the WARC, a screenshot that is not a PNG, a tls.json of another format', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'wacz-refuse-'));
    const signer = await createWaczSigner({
      signer: undefined,
      tsa: undefined,
      tsaUrl: undefined,
      dataDir: dir,
      software: 'Notary test',
    });
    const options = { software: 'Notary test', log: silentLog };
    const parts = await partsIn(dir);
    try {
      const line = parts.index.toString().split('\n')[0] ?? '';
      const past = line.replace(/"offset":"\d+"/, `"offset":"${parts.warc.bytes}"`);
      await expect(
        assembleWacz({ ...parts, index: Buffer.from(`${past}\n`) }, signer, options),
      ).rejects.toThrow(/index line 1 is not a record of the WARC/);
      const elsewhere = line.replace(/"filename":"[^"]+"/, '"filename":"../../etc/passwd"');
      await expect(
        assembleWacz({ ...parts, index: Buffer.from(elsewhere) }, signer, options),
      ).rejects.toThrow(/index line 1/);
      await expect(
        assembleWacz({ ...parts, screenshot: Buffer.from('GIF89a') }, signer, options),
      ).rejects.toThrow(/not a PNG/);
      await expect(assembleWacz({ ...parts, tls: Buffer.from('{}') }, signer, options)).rejects.toThrow(
        /tls\.json/,
      );
      // The parts as written pack and verify.
      const kept = await assembleWacz(parts, signer, options);
      await kept.dispose();
    } finally {
      await parts.dispose();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
