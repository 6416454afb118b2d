import { once } from 'node:events';
import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { deflatePrefixAndZeros, objectStreamBombPdf } from '@notary/pdf/hostile-pdfs.testing';
import { MONITOR_CHAIN_FORMAT } from '@notary/shared';
import type { VerifyReport } from '@notary/verify';
import type { ChainReport } from '@notary/verify/monitor-chain';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FIXTURES_DIR } from '../../../test/harness/fixtures';
import { createTestPki, type TestPki } from '../../../test/harness/pki';
import { startTestTsa, type TestTsa } from '../../../test/harness/tsa';
import type { LocalFile } from '../common/bridge';
import {
  type CertificateCheck,
  type CheckOptions,
  MAX_ANCHOR_FILE_BYTES,
  MAX_CERTIFICATE_BYTES,
} from '../common/certificate-check';
import type { IpcResult } from '../common/ipc';
import { readFileAtMost, withoutRedirects } from './certificate-check';
import { MainController } from './controller';
import { BrowserWindow, ipcMain } from './electron-stand-in.testing';
import { registerIpcHandlers } from './ipc';
import { isAppUrl } from './navigation';
import { pdfWithReceiptStream, receiptOf, signedCertificate } from './signed-certificate.testing';

vi.mock('electron', () => import('./electron-stand-in.testing'));

/**
 * The verify screen's certificate check in Electron main (through its IPC channel, as the renderer calls it)
 * holds the service's bounds on untrusted PDFs and never follows a redirect of a chain endpoint: hostile
 * PDFs (fuzzed files of the fixtures, a Flate bomb in an object stream, a Flate bomb in place of the receipt)
 * end as "no receipt" naming the bound, a certificate grown past its limit after it was picked is refused,
 * and loopback chain endpoints that redirect to another loopback server are never followed there. Checks 5
 * and 6 (RFC 3161 token, the certificate's PAdES signature) run in the worker with the trust anchors the
 * renderer chose: none (chains reported not checked), PEM files picked like any file (the test PKI's root,
 * an unrelated root, files that are not certificates), judged at a chosen date.
 */

const APP = 'app://notary/index.html';

function invoke<T>(channel: string, payload: unknown): Promise<IpcResult<T>> {
  return ipcMain.invoke(channel, APP, payload) as Promise<IpcResult<T>>;
}

describe('certificate check in Electron main: decode bounds and no redirects', () => {
  let dir: string;
  let unregister: () => void;
  let controller: MainController;
  /** Loopback "endpoints" that redirect every request to `target`, which counts what reaches it. */
  let redirecting: Server;
  let target: Server;
  let redirectingUrl: string;
  const reachedTarget: string[] = [];
  const askedRedirecting: string[] = [];
  const win = new BrowserWindow({});

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'notary-cert-check-'));
    controller = new MainController({
      userDataDir: path.join(dir, 'user-data'),
      tempDir: dir,
      documentsDir: dir,
      window: () => win as unknown as Electron.BrowserWindow,
    });
    unregister = registerIpcHandlers(controller.handlers(), (e) => isAppUrl(e.senderFrame?.url ?? ''));

    target = createServer((req, res) => {
      reachedTarget.push(req.url ?? '');
      req.resume();
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end('{"jsonrpc":"2.0","id":1,"result":"0x7a69"}');
    });
    target.listen(0, '127.0.0.1');
    await once(target, 'listening');
    const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;
    redirecting = createServer((req, res) => {
      askedRedirecting.push(`${req.method} ${req.url}`);
      req.resume();
      res.writeHead(req.method === 'POST' ? 307 : 302, { location: `${targetUrl}${req.url}` }).end();
    });
    redirecting.listen(0, '127.0.0.1');
    await once(redirecting, 'listening');
    redirectingUrl = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    unregister?.();
    controller?.close();
    for (const s of [redirecting, target]) {
      s?.closeAllConnections();
      s?.close();
    }
    await rm(dir, { recursive: true, force: true });
  });

  /** Writes `bytes` and registers the file as a drop on the window would. */
  async function pick(name: string, bytes: Uint8Array): Promise<LocalFile> {
    const file = path.join(dir, name);
    await writeFile(file, bytes);
    const r = await invoke<LocalFile[]>('files:dropped', { paths: [file] });
    if (!r.ok) throw new Error(JSON.stringify(r));
    return r.value[0] as LocalFile;
  }

  async function check(
    file: LocalFile,
    certificate: LocalFile,
    endpoints: { evmRpcUrls: string[]; stacksApiUrls: string[] } = { evmRpcUrls: [], stacksApiUrls: [] },
    options: CheckOptions = { trust: { kind: 'none' }, at: null },
  ) {
    return invoke<CertificateCheck>('public:check-certificate', {
      fileId: file.id,
      certificateId: certificate.id,
      endpoints,
      ...options,
    });
  }

  it('fuzzed and damaged PDFs of the fixtures: no receipt, main keeps answering', async () => {
    const file = await pick('f.txt', new TextEncoder().encode('hello'));
    for (const name of [
      'GHOSTSCRIPT-698804-1-fuzzed.pdf',
      'poppler-742-0-fuzzed.pdf',
      'poppler-90-0-fuzzed.pdf',
      'helloworld-bad.pdf',
      'xref_command_missing.pdf',
      'Pages-tree-refs.pdf',
    ]) {
      const certificate = await pick(
        name,
        new Uint8Array(await readFile(path.join(FIXTURES_DIR, 'pdfs', name))),
      );
      const result = await check(file, certificate);
      expect(result, name).toMatchObject({ ok: true, value: { kind: 'no-receipt' } });
    }
  });

  it('a Flate bomb in an object stream stops at the per-stream bound, in the worker', async () => {
    const file = await pick('g.txt', new TextEncoder().encode('hello'));
    // 96 MiB of zeros after the objects: past the 64 MiB bound of one decoded stream.
    const certificate = await pick('bomb.pdf', await objectStreamBombPdf(96 * 1024 * 1024));
    const result = await check(file, certificate);
    expect(result).toMatchObject({ ok: true, value: { kind: 'no-receipt' } });
    const message = result.ok && result.value.kind === 'no-receipt' ? result.value.message : '';
    expect(message).toMatch(/decodes? to more than \d+ bytes/);
  });

  it('a Flate bomb in place of receipt.json is read to 1 MiB and no further', async () => {
    const file = await pick('h.txt', new TextEncoder().encode('hello'));
    const bomb = await deflatePrefixAndZeros(new TextEncoder().encode('{"format":'), 32 * 1024 * 1024);
    const certificate = await pick('receipt-bomb.pdf', await pdfWithReceiptStream(bomb, 'FlateDecode'));
    const result = await check(file, certificate);
    expect(result).toMatchObject({ ok: true, value: { kind: 'no-receipt' } });
    const message = result.ok && result.value.kind === 'no-receipt' ? result.value.message : '';
    expect(message).toMatch(/receipt\.json does not decode: it decodes to more than 1048576 bytes/);
  });

  it("a certidão de permanência's run chain is read and checked in the worker: whole, broken, absent, or a bomb", async () => {
    const hash = (c: string) => c.repeat(64);
    const run = (n: number, own: string, previous: string | null) => ({
      run: n,
      observedAt: `2026-11-29T0${n}:00:00.000Z`,
      outcome: 'seen',
      cause: null,
      serialNumber: `ACME-${n}K2M9Q4XTB`,
      waczSha256: hash(own),
      previousWaczSha256: previous === null ? null : hash(previous),
    });
    const certidao = async (runs: unknown[]) => {
      const doc = await PDFDocument.create();
      doc.addPage();
      const chain = {
        format: MONITOR_CHAIN_FORMAT,
        monitorId: 'm-1',
        url: 'https://example.com/',
        issuedAt: '2026-11-29T12:00:00.000Z',
        runs,
      };
      await doc.attach(new TextEncoder().encode(JSON.stringify(chain)), 'monitor-chain.json', {
        mimeType: 'application/json',
      });
      return doc.save();
    };
    const chainOf = async (file: LocalFile) => {
      const r = await invoke<ChainReport>('public:check-chain', { fileId: file.id });
      if (!r.ok) throw new Error(JSON.stringify(r));
      return r.value;
    };
    const whole = await chainOf(
      await pick('certidao.pdf', await certidao([run(1, 'a', null), run(2, 'b', 'a')])),
    );
    expect(whole.breaks).toEqual([]);
    expect(whole.chain?.runs.map((r) => r.run)).toEqual([1, 2]);
    // The first run removed: the second stands first and names an archive the chain never had.
    const broken = await chainOf(await pick('removida.pdf', await certidao([run(2, 'b', 'a')])));
    expect(broken.breaks.map((b) => b.kind)).toEqual(['numbering', 'link']);
    const plain = await chainOf(await pick('contrato.pdf', await pdfWithReceiptStream(new Uint8Array(8))));
    expect(plain.chain).toBeUndefined();
    expect(plain.unreadable).toMatch(/no attached monitor-chain\.json/);
    const bomb = await chainOf(await pick('bomba.pdf', await objectStreamBombPdf(96 * 1024 * 1024)));
    expect(bomb.chain).toBeUndefined();
    expect(bomb.unreadable).toMatch(/decodes? to more than \d+ bytes/);
  });

  it('a certificate that grew past its limit after it was picked is refused before it is read', async () => {
    const file = await pick('i.txt', new TextEncoder().encode('hello'));
    const certificate = await pick('grown.pdf', new TextEncoder().encode('%PDF-1.7\n'));
    await truncate(path.join(dir, 'grown.pdf'), MAX_CERTIFICATE_BYTES + 1);
    const result = await check(file, certificate);
    expect(result).toMatchObject({ ok: false, error: { kind: 'too-large' } });
  });

  it('readFileAtMost reads a file whole, or refuses it past the limit', async () => {
    const p = path.join(dir, 'bytes.bin');
    await writeFile(p, new Uint8Array(1000).fill(7));
    const whole = await readFileAtMost(p, 1000);
    expect(whole.length).toBe(1000);
    expect(whole.byteLength).toBe(whole.buffer.byteLength);
    await expect(readFileAtMost(p, 999)).rejects.toMatchObject({ kind: 'too-large' });
  });

  it('chain endpoints that redirect are not followed: unavailable (not run, not evidence), the redirect target is never asked', async () => {
    const bytes = new TextEncoder().encode('contrato\n');
    const file = await pick('contrato.txt', bytes);
    const receipt = new TextEncoder().encode(JSON.stringify(receiptOf(bytes)));
    const certificate = await pick(
      'certificado.pdf',
      await pdfWithReceiptStream(deflateSync(receipt), 'FlateDecode'),
    );
    const result = await check(file, certificate, {
      evmRpcUrls: [redirectingUrl],
      stacksApiUrls: [`${redirectingUrl}/stacks`],
    });
    expect(result.ok).toBe(true);
    const report = (result as { value: { kind: 'report'; report: VerifyReport } }).value.report;
    expect(report.checks.map((c) => c.status)).toEqual([
      'passed',
      'passed',
      'not-run',
      'not-run',
      'not-run',
      'not-run',
    ]);
    // A redirect is the endpoint not answering itself: no evidence against the receipt, the proof incomplete.
    for (const c of report.checks.slice(2, 4)) {
      expect(c.reason, c.name).toBe('unavailable');
      const endpoint = c.evidence.find((e) => e.label === 'endpoint unavailable');
      expect(endpoint?.value, c.name).toMatch(/redirect/);
    }
    expect(report).toMatchObject({ outcome: 'incomplete', exitCode: 3, failedAt: null });
    expect(askedRedirecting.length).toBeGreaterThanOrEqual(2);
    expect(reachedTarget).toEqual([]);
  });

  it('withoutRedirects refuses a redirect even when the caller asks to follow', async () => {
    const guarded = withoutRedirects(fetch);
    await expect(guarded(redirectingUrl, { method: 'GET', redirect: 'follow' })).rejects.toThrow();
    expect(reachedTarget).toEqual([]);
  });
});

describe('certificate check in Electron main: checks 5 and 6 with the trust anchors chosen', () => {
  let dir: string;
  let unregister: () => void;
  let controller: MainController;
  let pki: TestPki;
  let tsa: TestTsa;
  let file: LocalFile;
  let certificate: LocalFile;
  /** What the check asked of the network: nothing, there being no chain endpoint. */
  const asked: string[] = [];
  const win = new BrowserWindow({});

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'notary-cert-anchors-'));
    pki = await createTestPki();
    tsa = await startTestTsa(pki);
    controller = new MainController({
      userDataDir: path.join(dir, 'user-data'),
      tempDir: dir,
      documentsDir: dir,
      window: () => win as unknown as Electron.BrowserWindow,
    });
    unregister = registerIpcHandlers(controller.handlers(), (e) => isAppUrl(e.senderFrame?.url ?? ''));
    const bytes = new TextEncoder().encode('contrato assinado\n');
    file = await pick('contrato.txt', bytes);
    const requestsBefore = tsa.requests;
    certificate = await pick('certificado.pdf', await signedCertificate(pki, tsa.url, bytes));
    // The receipt's token and the signature timestamp: the only requests, made while issuing.
    expect(tsa.requests - requestsBefore).toBe(2);
  }, 60_000);

  afterAll(async () => {
    unregister?.();
    controller?.close();
    await tsa?.stop();
    await pki?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  async function pick(name: string, bytes: Uint8Array | string): Promise<LocalFile> {
    const p = path.join(dir, name);
    await writeFile(p, bytes);
    const r = await invoke<LocalFile[]>('files:dropped', { paths: [p] });
    if (!r.ok) throw new Error(JSON.stringify(r));
    return r.value[0] as LocalFile;
  }

  async function report(options: CheckOptions): Promise<VerifyReport> {
    const requests = tsa.requests;
    const result = await invoke<CertificateCheck>('public:check-certificate', {
      fileId: file.id,
      certificateId: certificate.id,
      endpoints: { evmRpcUrls: [], stacksApiUrls: [] },
      ...options,
    });
    // Checks 5 and 6 are offline: not even the TSA is asked again.
    expect(tsa.requests).toBe(requests);
    if (!result.ok || result.value.kind !== 'report') throw new Error(JSON.stringify(result));
    return result.value.report;
  }

  const statusOf = (r: VerifyReport) => r.checks.map((c) => c.status);

  it('no anchor: the token and the signature hold, their chains are reported not checked', async () => {
    const r = await report({ trust: { kind: 'none' }, at: null });
    expect(statusOf(r)).toEqual(['passed', 'passed', 'not-run', 'not-run', 'partial', 'partial']);
    expect(r.ok).toBe(true);
    for (const c of r.checks.slice(4)) {
      const notChecked = c.evidence.filter((e) => /(^|: )not checked$/.test(e.label)).map((e) => e.value);
      expect(notChecked.join('; '), c.name).toMatch(/certificate chain/);
      expect(c.evidence.some((e) => e.ok === false)).toBe(false);
    }
    expect(r.checks[5]?.pades?.level).toBe('B-T');
    expect(asked).toEqual([]);
  });

  it("the test PKI's root picked as a PEM file: checks 5 and 6 pass (B-T)", async () => {
    const root = await pick('root.pem', pki.root.certPem);
    const r = await report({ trust: { kind: 'files', fileIds: [root.id] }, at: null });
    expect(statusOf(r)).toEqual(['passed', 'passed', 'not-run', 'not-run', 'passed', 'passed']);
    const six = r.checks[5];
    expect(six?.evidence.find((e) => e.label.startsWith('chain to'))?.ok).toBe(true);
    expect(six?.pades).toMatchObject({ level: 'B-T', online: false });
  });

  it('judged at a date before the signer certificate existed, check 6 fails; check 5 is unchanged', async () => {
    const root = await pick('root-again.pem', pki.root.certPem);
    const at = '2001-01-01T00:00:00.000Z';
    const r = await report({ trust: { kind: 'files', fileIds: [root.id] }, at });
    expect(r.checks[4]?.status).toBe('passed');
    expect(r.checks[5]?.status).toBe('failed');
    expect(r.checks[5]?.pades?.at).toBe(at);
    expect(r.failedAt).toBe(6);
  });

  it('an unrelated root: the chains fail', async () => {
    const other = await pick('other.pem', pki.otherRoot.certPem);
    const r = await report({ trust: { kind: 'files', fileIds: [other.id] }, at: null });
    expect(r.checks[4]?.status).toBe('failed');
    expect(r.checks[5]?.status).toBe('failed');
    expect(r.failedAt).toBe(5);
  });

  it('the ICP-Brasil roots (read by main, not sent by the renderer): the test PKI does not chain to them', async () => {
    const r = await report({ trust: { kind: 'icp-brasil' }, at: null });
    expect(statusOf(r).slice(4)).toEqual(['failed', 'failed']);
    for (const c of r.checks.slice(4)) {
      expect(c.evidence.filter((e) => e.ok === false).every((e) => /chain to/.test(e.label))).toBe(true);
    }
  });

  it('several PEM files: the certificates of all count', async () => {
    const other = await pick('other-2.pem', pki.otherRoot.certPem);
    const chain = await pick('chain.pem', pki.caChainPem);
    const r = await report({ trust: { kind: 'files', fileIds: [other.id, chain.id] }, at: null });
    expect(statusOf(r).slice(4)).toEqual(['passed', 'passed']);
  });

  it('a file without certificate, a key file and a file past 1 MiB are named, nothing is checked', async () => {
    const text = await pick('notes.txt', 'not a certificate at all');
    const key = await pick('signer.key', pki.rsa.keyPem);
    const fake = await pick('fake.pem', '-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n');
    const big = await pick('big.pem', `${pki.root.certPem}${' '.repeat(MAX_ANCHOR_FILE_BYTES)}`);
    for (const [f, problem] of [
      [text, 'no-certificate'],
      [key, 'no-certificate'],
      [fake, 'no-certificate'],
      [big, 'too-large'],
    ] as const) {
      const root = await pick(`root-${f.name}.pem`, pki.root.certPem);
      const result = await invoke<CertificateCheck>('public:check-certificate', {
        fileId: file.id,
        certificateId: certificate.id,
        endpoints: { evmRpcUrls: [], stacksApiUrls: [] },
        trust: { kind: 'files', fileIds: [root.id, f.id] },
        at: null,
      });
      expect(result, f.name).toEqual({
        ok: true,
        value: { kind: 'bad-anchor', fileName: f.name, problem },
      });
    }
  });

  it('an anchor file id never picked is refused', async () => {
    const result = await invoke<CertificateCheck>('public:check-certificate', {
      fileId: file.id,
      certificateId: certificate.id,
      endpoints: { evmRpcUrls: [], stacksApiUrls: [] },
      trust: { kind: 'files', fileIds: ['6f1c1d2e-0000-4000-8000-0000000000ff'] },
      at: null,
    });
    expect(result).toMatchObject({ ok: false, error: { kind: 'not-found' } });
  });
});
