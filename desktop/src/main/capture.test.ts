/**
 * "Capture a web page" through main's IPC: the named channel as the preload calls it, the real controller and
 * `NotaryClient`, against a loopback HTTP server speaking the service's wire formats (tRPC over `httpLink`, the
 * platform's error shape with `data.httpStatus`/`retryAfterSeconds`, better-auth's sign-in and token routes). The
 * capture itself (Chromium, WACZ, destination checks) is tested by the server's e2e suite; here: what main sends, what
 * it refuses before any request, and how each answer reaches the renderer.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { DocumentDto } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { clientErrorFrom } from '../common/errors';
import type { IpcResult } from '../common/ipc';
import { captureErrorText, captureRecord } from '../renderer/capture';
import { translator } from '../renderer/i18n';
import { MainController } from './controller';
import { BrowserWindow, ipcMain } from './electron-stand-in.testing';
import { registerIpcHandlers } from './ipc';
import { isAppUrl } from './navigation';

vi.mock('electron', () => import('./electron-stand-in.testing'));

const APP = 'app://notary/index.html';
const DOC_ID = '0b6f2c1e-7d5a-4e8b-9c3f-2a1d4e5f6a7b';
const PAGE = 'https://example.com/noticia?id=7';
const SCREENSHOT = 'https://s3.example/notary/t1/shot?X-Amz-Expires=300&X-Amz-Signature=abc';

function captureDto(url: string): DocumentDto {
  const now = new Date().toISOString();
  return {
    id: DOC_ID,
    serialNumber: 'CARTORIO-7K2M9Q4XTB',
    fileName: 'example.com-20261125T104000Z.wacz',
    fileSize: 48213,
    mimeType: 'application/wacz',
    sha256Hash: 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9',
    sourceType: 'web-capture',
    sourceUri: url,
    screenshot: SCREENSHOT,
    onchainStatus: 'pending',
    onchainTxHash: null,
    onchainAttestationUid: null,
    onchainAt: null,
    stacksStatus: 'pending',
    stacksTxId: null,
    stacksAnchoredAt: null,
    consentGiven: true,
    consentTimestamp: now,
    createdAt: now,
    published: false,
    publishedAt: null,
    acervoTitle: null,
    acervoAuthor: null,
    metadata: null,
  };
}

/** A JWT the client can schedule renewal by (it never verifies; the server would). */
function fakeJwt(): string {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  return `${b64({ alg: 'ES256' })}.${b64({ sub: 'u1', iat: now, exp: now + 300 })}.sig`;
}

const trpcError = (status: number, code: string, message: string, extra: Record<string, unknown> = {}) => ({
  status,
  body: { error: { message, code: -32000, data: { code, httpStatus: status, ...extra } } },
});

/** What the stand-in answers `documents.capture` with, by URL (the platform's tRPC error shape). */
const CAPTURE_ERRORS: Record<string, { status: number; body: unknown; headers?: Record<string, string> }> = {
  // Well-formed, so only the server (which resolves the name) can refuse it.
  'http://intranet.example/': trpcError(400, 'BAD_REQUEST', 'The destination 10.0.0.8 is not allowed'),
  'https://role.example/': trpcError(403, 'FORBIDDEN', 'Capturing a web page needs the editor role'),
  'https://limited.example/': {
    ...trpcError(429, 'TOO_MANY_REQUESTS', 'Too many requests (webCapture limit)', { retryAfterSeconds: 17 }),
    headers: { 'retry-after': '17' },
  },
  'https://nxdomain.example/': trpcError(502, 'BAD_GATEWAY', 'net::ERR_NAME_NOT_RESOLVED'),
  'https://nochromium.example/': trpcError(503, 'SERVICE_UNAVAILABLE', 'No Chromium (set CHROMIUM_PATH)'),
  'https://slow.example/': trpcError(504, 'GATEWAY_TIMEOUT', 'The capture did not finish within 30000 ms'),
};

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `ipcRenderer.invoke` from the app's page. */
const invoke = <T>(channel: string, payload?: unknown) =>
  (payload === undefined ? ipcMain.invoke(channel, APP) : ipcMain.invoke(channel, APP, payload)) as Promise<
    IpcResult<T>
  >;

describe('web capture through main (IPC, controller, client)', () => {
  let server: Server;
  let base: string;
  let userData: string;
  let unregister: () => void;
  let controller: MainController;
  const captures: unknown[] = [];

  beforeAll(async () => {
    server = createServer(async (req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const body = await readBody(req);
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(value));
      };
      switch (url.pathname) {
        case '/api/auth/sign-in/email-otp':
          return json(200, { token: 'session-token' });
        case '/api/auth/token':
          return json(200, { token: fakeJwt() });
        case '/api/auth/organization/list':
          return json(200, []);
        case '/trpc/session.me':
          return json(200, {
            result: {
              data: {
                userId: 'u1',
                email: 'ana@cartorio.example',
                tenantId: 't1',
                tenantKind: 'personal',
                orgId: null,
                role: 'owner',
              },
            },
          });
        case '/trpc/documents.capture': {
          const request = JSON.parse(body) as { url: string; fileName?: string };
          captures.push(request);
          const error = CAPTURE_ERRORS[request.url];
          if (error) return json(error.status, error.body, error.headers);
          return json(200, { result: { data: captureDto(request.url) } });
        }
        default:
          return json(404, { message: 'Not found', code: 'NOT_FOUND' });
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    userData = await mkdtemp(path.join(os.tmpdir(), 'notary-capture-'));
    const win = new BrowserWindow({});
    controller = new MainController({
      userDataDir: userData,
      tempDir: userData,
      documentsDir: userData,
      window: () => win as unknown as Electron.BrowserWindow,
    });
    unregister = registerIpcHandlers(controller.handlers(), (e) => isAppUrl(e.senderFrame?.url ?? ''));
    expect((await invoke('settings:set-server-url', { url: base })).ok).toBe(true);
    expect((await invoke('auth:sign-in', { email: 'ana@cartorio.example', code: '123456' })).ok).toBe(true);
  });

  afterAll(async () => {
    unregister?.();
    controller?.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await rm(userData, { recursive: true, force: true });
  });

  it('captures a page: sends {url, fileName, consent: true} and answers the Document', async () => {
    const result = await invoke<DocumentDto>('documents:capture-web', {
      url: PAGE,
      fileName: 'noticia.wacz',
      consent: true,
    });
    expect(result).toMatchObject({
      ok: true,
      value: { sourceType: 'web-capture', sourceUri: PAGE, screenshot: SCREENSHOT },
    });
    if (!result.ok) throw new Error('expected the Document');
    // What the renderer then shows: serial, the page's address and the screenshot.
    expect(captureRecord(result.value)).toEqual({
      serial: 'CARTORIO-7K2M9Q4XTB',
      pageUrl: PAGE,
      screenshot: SCREENSHOT,
    });
    expect((await invoke('documents:capture-web', { url: 'http://example.org/', consent: true })).ok).toBe(
      true,
    );
    expect(captures).toEqual([
      { url: PAGE, consent: true, fileName: 'noticia.wacz' },
      { url: 'http://example.org/', consent: true },
    ]);
  });

  it('refuses another scheme, credentials or missing consent in main, before any request', async () => {
    const before = captures.length;
    for (const payload of [
      { url: 'file:///etc/passwd', consent: true },
      { url: 'javascript:alert(1)', consent: true },
      { url: 'https://user:pass@example.com/', consent: true },
      { url: 'example.com', consent: true },
      { url: ` ${PAGE}`, consent: true },
      { url: PAGE, consent: false },
      { url: PAGE, fileName: 'a\nb', consent: true },
    ]) {
      const result = await invoke('documents:capture-web', payload);
      expect(result, JSON.stringify(payload)).toMatchObject({ ok: false, error: { kind: 'invalid-input' } });
    }
    expect(captures.length).toBe(before);
  });

  it.each([
    [
      'a refused destination (400)',
      'http://intranet.example/',
      'bad-request',
      400,
      undefined,
      'The server refused the address: only http(s), without user name and password, to an allowed destination (not local or private).',
    ],
    [
      'a role below editor (403)',
      'https://role.example/',
      'forbidden',
      403,
      undefined,
      'Your role in this workspace does not allow capturing pages (editor or higher is needed).',
    ],
    [
      'the rate limit (429)',
      'https://limited.example/',
      'rate-limited',
      429,
      17,
      'Too many captures (5 a minute) or the queue is full; try again in 17 s.',
    ],
    [
      'an unreachable site (502)',
      'https://nxdomain.example/',
      'bad-gateway',
      502,
      undefined,
      'The site could not be reached (DNS, connection or TLS); nothing was recorded.',
    ],
    [
      'no Chromium on the server (503)',
      'https://nochromium.example/',
      'unavailable',
      503,
      undefined,
      'The server has no Chromium installed; capturing is not available.',
    ],
    [
      'a capture that timed out (504)',
      'https://slow.example/',
      'bad-gateway',
      504,
      undefined,
      'The capture took too long and was stopped; nothing was recorded.',
    ],
  ])('answers %s as a sentence', async (_what, url, kind, status, retryAfterSeconds, sentence) => {
    const result = await invoke('documents:capture-web', { url, consent: true });
    if (result.ok) throw new Error('expected a failure');
    expect(result.error).toMatchObject({ kind, status, ...(retryAfterSeconds ? { retryAfterSeconds } : {}) });
    // The renderer rebuilds the error from the envelope and says it.
    expect(captureErrorText(translator('en'), clientErrorFrom(result.error), base)).toBe(sentence);
  });
});
