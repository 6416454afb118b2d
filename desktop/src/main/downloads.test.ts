/**
 * Certificate and timestamp files written by main, which must not trust the server with the local disk: whatever the
 * server's `Content-Disposition` says, the name is the client's (`certificado-<serial>.pdf`, `<serial>.tsr`), and
 * nothing is written unless the bytes are a PDF / a DER SEQUENCE. The server is a loopback stand-in of the notary
 * service that can lie; the timestamp it serves is a real RFC 3161 response from the test TSA (`openssl ts -reply`),
 * and the certificate a real PDF.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { FIXTURES_DIR } from '../../../test/harness/fixtures';
import { createTestPki, type TestPki } from '../../../test/harness/pki';
import { startTestTsa, type TestTsa } from '../../../test/harness/tsa';
import type { SavedFile } from '../common/bridge';
import type { IpcResult } from '../common/ipc';
import { MainController } from './controller';
import { BrowserWindow, dialog, ipcMain, shell } from './electron-stand-in.testing';
import { registerIpcHandlers } from './ipc';
import { isAppUrl } from './navigation';
import { EncryptedTokenStore } from './token-store';

vi.mock('electron', () => import('./electron-stand-in.testing'));

const run = promisify(execFile);
const APP = 'app://notary/index.html';
const DOC_ID = '0b6f2c1e-7d5a-4e8b-9c3f-2a1d4e5f6a7b';
const SERIAL = 'ACME-7K2M9Q4XTB';
const MONITOR_ID = '5f0c3c1e-7d5a-4e8b-9c3f-2a1d4e5f6a7c';
const HOSTILE = `attachment; filename="../../evil.sh"; filename*=UTF-8''..%2F..%2Fevil.sh`;
const SCRIPT = new TextEncoder().encode('#!/bin/sh\necho pwned > ~/pwned\n');

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
}

const b64url = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');

/** Every file under `dir`, relative. */
async function tree(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
}

/** `ipcRenderer.invoke` from the app's page. */
function invoke<T>(channel: string, payload: unknown): Promise<IpcResult<T>> {
  return ipcMain.invoke(channel, APP, payload) as Promise<IpcResult<T>>;
}

describe('certificate and timestamp files: client-chosen names, checked bytes', () => {
  let root: string;
  let userData: string;
  let tempDir: string;
  let documentsDir: string;
  let server: Server;
  let base: string;
  let pki: TestPki & { dispose(): Promise<void> };
  let tsa: TestTsa;
  let pdf: Uint8Array;
  let tsr: Uint8Array;
  let unregister: () => void;
  let certificateAnswer: Answer;
  let timestampAnswer: Answer;
  /** `X-Serial-Number` of the certidão the stand-in serves (a lying server may name a path there too). */
  let certidaoSerial = SERIAL;
  /** The ata draft requests the stand-in server received: method and JSON body. */
  const ataRequests: Array<{ method: string; body: string }> = [];
  const win = new BrowserWindow({});

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'notary-downloads-'));
    userData = path.join(root, 'user-data');
    // Deep enough that `../../evil.sh` from any folder we write to stays inside `root`, where it is looked for.
    tempDir = path.join(root, 'a', 'b', 'tmp');
    documentsDir = path.join(root, 'a', 'b', 'documents');
    await mkdir(documentsDir, { recursive: true });
    pdf = new Uint8Array(await readFile(path.join(FIXTURES_DIR, 'pdfs/hello_world_rotated.pdf')));

    // A real TimeStampResp: openssl's query over a SHA-256, answered by the test TSA.
    pki = await createTestPki();
    tsa = await startTestTsa(pki);
    const query = path.join(root, 'q.tsq');
    await run('openssl', ['ts', '-query', '-digest', 'ab'.repeat(32), '-sha256', '-cert', '-out', query]);
    const answer = await fetch(tsa.url, {
      method: 'POST',
      headers: { 'content-type': 'application/timestamp-query' },
      body: await readFile(query),
    });
    tsr = new Uint8Array(await answer.arrayBuffer());

    const now = Math.floor(Date.now() / 1000);
    const jwt = `${b64url({ alg: 'ES256' })}.${b64url({ exp: now + 300, iat: now })}.sig`;
    server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        body += chunk;
      });
      const url = new URL(req.url ?? '/', 'http://x');
      const send = (a: Answer) => {
        res.writeHead(a.status, { 'content-length': String(a.body.byteLength), ...a.headers });
        res.end(a.body);
      };
      const json = (body: unknown) =>
        send({
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: new TextEncoder().encode(JSON.stringify(body)),
        });
      if (req.headers.authorization !== `Bearer ${url.pathname === '/api/auth/token' ? 'session' : jwt}`) {
        res.writeHead(401).end();
      } else if (url.pathname === '/api/auth/token') json({ token: jwt });
      else if (url.pathname === '/trpc/documents.get')
        json({ result: { data: { document: { id: DOC_ID, serialNumber: SERIAL } } } });
      else if (url.pathname === `/api/documents/${DOC_ID}/certificate`) send(certificateAnswer);
      else if (url.pathname === `/api/documents/${DOC_ID}/timestamp` && req.method === 'POST')
        send(timestampAnswer);
      else if (url.pathname === `/api/documents/${DOC_ID}/ata`) {
        req.on('end', () => {
          ataRequests.push({ method: req.method ?? '', body });
          send(certificateAnswer);
        });
      } else if (url.pathname === `/api/monitors/${MONITOR_ID}/certidao`) {
        send({
          status: 200,
          headers: {
            'content-type': 'application/pdf',
            'content-disposition': HOSTILE,
            'x-serial-number': certidaoSerial,
          },
          body: pdf,
        });
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const controller = new MainController({
      userDataDir: userData,
      tempDir,
      documentsDir,
      window: () => win as unknown as Electron.BrowserWindow,
    });
    unregister = registerIpcHandlers(controller.handlers(), (e) => isAppUrl(e.senderFrame?.url ?? ''));
    expect(await invoke('settings:set-server-url', { url: base })).toMatchObject({ ok: true });
    // Signed in: the session token main keeps encrypted for this server.
    await new EncryptedTokenStore(path.join(userData, 'session.bin')).save(base, 'session');
  });

  afterAll(async () => {
    unregister?.();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await tsa?.stop();
    await pki?.dispose();
    await rm(root, { recursive: true, force: true });
  });

  beforeEach(async () => {
    await rm(path.join(tempDir, 'notary-certificates'), { recursive: true, force: true });
    dialog.saveDialogs = [];
    dialog.nextSavePath = null;
    shell.openedPaths = [];
    certificateAnswer = {
      status: 200,
      headers: {
        'content-type': 'application/pdf',
        'content-disposition': HOSTILE,
        'x-service-signed': 'none',
      },
      body: pdf,
    };
    timestampAnswer = {
      status: 200,
      headers: { 'content-type': 'application/timestamp-reply', 'content-disposition': HOSTILE },
      body: tsr,
    };
  });

  /** Nothing named by the server was written anywhere under the test's root. */
  const noEvil = async () => expect((await tree(root)).filter((f) => f.includes('evil'))).toEqual([]);

  it('opens a certificate as certificado-<serial>.pdf in its own folder, ignoring ../../evil.sh', async () => {
    const opened = await invoke<SavedFile>('certificate:open', { id: DOC_ID, language: 'pt' });
    expect(opened).toEqual({ ok: true, value: { fileName: `certificado-${SERIAL}.pdf`, signed: 'none' } });
    const target = path.join(tempDir, 'notary-certificates', `certificado-${SERIAL}.pdf`);
    expect(shell.openedPaths).toEqual([target]);
    expect(new Uint8Array(await readFile(target))).toEqual(pdf);
    expect(await tree(path.join(tempDir, 'notary-certificates'))).toEqual([`certificado-${SERIAL}.pdf`]);
    await noEvil();
  });

  it('suggests certificate-<serial>.pdf in the save dialog (English) and writes where the user chose', async () => {
    const chosen = path.join(documentsDir, 'chosen.pdf');
    dialog.nextSavePath = chosen;
    const saved = await invoke<SavedFile>('certificate:save', { id: DOC_ID, language: 'en' });
    expect(saved).toEqual({ ok: true, value: { fileName: 'chosen.pdf', signed: 'none' } });
    expect(dialog.saveDialogs.map((d) => d.defaultPath)).toEqual([
      path.join(documentsDir, `certificate-${SERIAL}.pdf`),
    ]);
    expect(new Uint8Array(await readFile(chosen))).toEqual(pdf);
    await noEvil();
  });

  it('saves the ata draft: the requester posted as JSON, minuta-ata-<serial>.pdf suggested; the last one again by GET', async () => {
    const chosen = path.join(documentsDir, 'ata.pdf');
    dialog.nextSavePath = chosen;
    const requester = { name: 'Maria', cpf: '529.982.247-25' };
    const saved = await invoke<SavedFile>('ata:save', { id: DOC_ID, requester });
    expect(saved).toEqual({ ok: true, value: { fileName: 'ata.pdf', signed: 'none' } });
    expect(dialog.saveDialogs.map((d) => d.defaultPath)).toEqual([
      path.join(documentsDir, `minuta-ata-${SERIAL}.pdf`),
    ]);
    expect(new Uint8Array(await readFile(chosen))).toEqual(pdf);
    dialog.nextSavePath = path.join(documentsDir, 'again.pdf');
    expect(await invoke<SavedFile>('ata:save', { id: DOC_ID })).toMatchObject({ ok: true });
    expect(ataRequests).toEqual([
      { method: 'POST', body: JSON.stringify({ requester }) },
      { method: 'GET', body: '' },
    ]);
    await noEvil();
  });

  it('saves the certidão de permanência as certidao-permanencia-<serial>.pdf, never under a name the server chose', async () => {
    const chosen = path.join(documentsDir, 'certidao.pdf');
    dialog.nextSavePath = chosen;
    expect(await invoke<SavedFile>('certidao:save', { id: MONITOR_ID })).toEqual({
      ok: true,
      value: { fileName: 'certidao.pdf' },
    });
    expect(new Uint8Array(await readFile(chosen))).toEqual(pdf);
    certidaoSerial = '../../evil.sh';
    dialog.nextSavePath = path.join(documentsDir, 'again.pdf');
    expect(await invoke<SavedFile>('certidao:save', { id: MONITOR_ID })).toMatchObject({ ok: true });
    expect(dialog.saveDialogs.map((d) => d.defaultPath)).toEqual([
      path.join(documentsDir, `certidao-permanencia-${SERIAL}.pdf`),
      path.join(documentsDir, 'certidao-permanencia.pdf'),
    ]);
    certidaoSerial = SERIAL;
    await noEvil();
  });

  it('refuses a certificate that is not a PDF: a clear error, no dialog, nothing written or opened', async () => {
    certificateAnswer = { ...certificateAnswer, body: SCRIPT };
    const before = await tree(root);
    dialog.nextSavePath = path.join(documentsDir, 'never.pdf');
    for (const channel of ['certificate:open', 'certificate:save']) {
      const result = await invoke<SavedFile>(channel, { id: DOC_ID, language: 'en' });
      expect(result).toMatchObject({ ok: false, error: { kind: 'invalid-content' } });
      expect(result.ok === false && result.error.message).toMatch(/not a PDF.*nothing was saved/);
    }
    expect(dialog.saveDialogs).toEqual([]);
    expect(shell.openedPaths).toEqual([]);
    expect(await tree(root)).toEqual(before);
    await noEvil();
  });

  it('saves the RFC 3161 response as <serial>.tsr, byte for byte, ignoring ../../evil.sh', async () => {
    const chosen = path.join(documentsDir, 'chosen.tsr');
    dialog.nextSavePath = chosen;
    const saved = await invoke<SavedFile>('timestamp:save', { id: DOC_ID });
    expect(saved).toEqual({ ok: true, value: { fileName: 'chosen.tsr' } });
    expect(dialog.saveDialogs.map((d) => d.defaultPath)).toEqual([path.join(documentsDir, `${SERIAL}.tsr`)]);
    expect(new Uint8Array(await readFile(chosen))).toEqual(tsr);
    // An independent reading: openssl parses what was written as a granted TimeStampResp.
    const { stdout } = await run('openssl', ['ts', '-reply', '-in', chosen, '-text']);
    expect(stdout).toMatch(/Status: Granted/);
    await noEvil();
  });

  it.each([
    ['a JSON body', new TextEncoder().encode('{"ok":true}')],
    ['a shell script', SCRIPT],
    ['a PDF', new TextEncoder().encode('%PDF-1.7\n')],
    ['a truncated response', () => tsr.subarray(0, tsr.length - 1)],
  ])('refuses %s as a timestamp: a clear error, no dialog, nothing written', async (_what, body) => {
    timestampAnswer = { ...timestampAnswer, body: typeof body === 'function' ? body() : body };
    const before = await tree(root);
    dialog.nextSavePath = path.join(documentsDir, 'never.tsr');
    const result = await invoke<SavedFile>('timestamp:save', { id: DOC_ID });
    expect(result).toMatchObject({ ok: false, error: { kind: 'invalid-content' } });
    expect(result.ok === false && result.error.message).toMatch(
      /not an RFC 3161 response.*nothing was saved/,
    );
    expect(dialog.saveDialogs).toEqual([]);
    expect(await tree(root)).toEqual(before);
  });

  it('writes nothing when the server answers an error (429 keeps its wait)', async () => {
    certificateAnswer = {
      status: 429,
      headers: { 'content-type': 'application/json', 'content-disposition': HOSTILE },
      body: new TextEncoder().encode(
        JSON.stringify({ message: 'Too many requests', code: 'RATE_LIMITED', retryAfterSeconds: 12 }),
      ),
    };
    const before = await tree(root);
    const result = await invoke<SavedFile>('certificate:open', { id: DOC_ID, language: 'pt' });
    expect(result).toMatchObject({
      ok: false,
      error: { kind: 'rate-limited', status: 429, retryAfterSeconds: 12 },
    });
    expect(await tree(root)).toEqual(before);
  });
});
