import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { deflatePrefixAndZeros, objectStreamBombPdf } from '@notary/pdf/hostile-pdfs';
import type { VerifyReport } from '@notary/verify';
import { PDFDocument, PDFHexString, PDFName, PDFRawStream, PDFString } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FIXTURES_DIR } from '../../../test/harness/fixtures';
import type { LocalFile } from '../common/bridge';
import { type CertificateCheck, MAX_CERTIFICATE_BYTES } from '../common/certificate-check';
import type { IpcResult } from '../common/ipc';
import { readFileAtMost, withoutRedirects } from './certificate-check';
import { MainController } from './controller';
import { registerIpcHandlers } from './ipc';
import { isAppUrl } from './navigation';
import { BrowserWindow, ipcMain } from './testing/electron-stand-in';

vi.mock('electron', () => import('./testing/electron-stand-in'));

/**
 * The verify screen's certificate check in Electron main (through its IPC channel, as the renderer calls it)
 * holds the service's bounds on untrusted PDFs and never follows a redirect of a chain endpoint: hostile
 * PDFs (fuzzed files of the fixtures, a Flate bomb in an object stream, a Flate bomb in place of the receipt)
 * end as "no receipt" naming the bound, a certificate grown past its limit after it was picked is refused,
 * and loopback chain endpoints that redirect to another loopback server are never followed there.
 */

const APP = 'app://notary/index.html';
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

function invoke<T>(channel: string, payload: unknown): Promise<IpcResult<T>> {
  return ipcMain.invoke(channel, APP, payload) as Promise<IpcResult<T>>;
}

/** A one-page PDF carrying `receipt.json` whose embedded file stream is `stream` (raw, with `filter`). */
async function pdfWithReceiptStream(stream: Uint8Array, filter?: 'FlateDecode'): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  doc.addPage();
  const ctx = doc.context;
  const embedded = PDFRawStream.of(
    ctx.obj({ Type: 'EmbeddedFile', ...(filter ? { Filter: filter } : {}) }),
    stream,
  );
  const spec = ctx.register(
    ctx.obj({
      Type: 'Filespec',
      F: PDFString.of('receipt.json'),
      UF: PDFHexString.fromText('receipt.json'),
      EF: { F: ctx.register(embedded) },
      AFRelationship: 'Supplement',
    }),
  );
  doc.catalog.set(
    PDFName.of('Names'),
    ctx.obj({ EmbeddedFiles: ctx.obj({ Names: [PDFHexString.fromText('receipt.json'), spec] }) }),
  );
  doc.catalog.set(PDFName.of('AF'), ctx.obj([spec]));
  return doc.save({ useObjectStreams: false });
}

/** A receipt of `file` anchored (as it claims) on both chains, in a batch of one. */
function receiptOf(file: Uint8Array): unknown {
  const hash = sha256(file);
  const hex32 = (c: string) => `0x${c.repeat(64)}`;
  return {
    format: 'notary-receipt',
    version: 1,
    service: { name: 'Notary', url: 'http://localhost:3000' },
    document: {
      id: '6f1c1d2e-0000-4000-8000-000000000001',
      serialNumber: 'ACME-7K2M9Q4XTB',
      sha256: hash,
      fileName: 'contrato.txt',
      fileSize: file.length,
      mimeType: 'text/plain',
      registeredAt: '2026-01-01T00:00:00.000Z',
    },
    merkle: { hashing: 'sha256-rfc6962', leafIndex: 0, leafCount: 1, siblings: [], root: hash },
    evm: {
      status: 'registered',
      network: 'hardhat',
      chainId: 31337,
      schema: 'bytes32 merkleRoot',
      schemaUid: hex32('c'),
      easAddress: `0x${'1'.repeat(40)}`,
      schemaRegistryAddress: null,
      attestationUid: hex32('a'),
      attester: `0x${'2'.repeat(40)}`,
      txHash: hex32('b'),
      blockNumber: 7,
      anchoredAt: '2026-01-01T00:00:05.000Z',
    },
    stacks: {
      status: 'registered',
      network: 'devnet',
      contractId: 'ST1PQHQKV0RJXZFY1DGX8MNSNYVE3VGZJSRTPGZGM.notary',
      txId: hex32('d'),
      blockHeight: 9,
      anchoredAt: '2026-01-01T00:00:06.000Z',
    },
    timestamp: null,
  };
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
  ) {
    return invoke<CertificateCheck>('public:check-certificate', {
      fileId: file.id,
      certificateId: certificate.id,
      endpoints,
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

  it('chain endpoints that redirect are not followed: the check fails, the redirect target is never asked', async () => {
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
      'failed',
      'failed',
      'not-run',
      'not-run',
    ]);
    for (const c of report.checks.slice(2, 4)) {
      const endpoint = c.evidence.find((e) => e.label === 'endpoint');
      expect(endpoint?.value, c.name).toMatch(/redirect/);
    }
    expect(askedRedirecting.length).toBeGreaterThanOrEqual(2);
    expect(reachedTarget).toEqual([]);
  });

  it('withoutRedirects refuses a redirect even when the caller asks to follow', async () => {
    const guarded = withoutRedirects(fetch);
    await expect(guarded(redirectingUrl, { method: 'GET', redirect: 'follow' })).rejects.toThrow();
    expect(reachedTarget).toEqual([]);
  });
});
