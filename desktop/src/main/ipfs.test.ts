/**
 * "Import from IPFS" through main's IPC: the named channels as the preload calls them, the real controller and
 * `NotaryClient`, against a loopback HTTP server speaking the service's wire formats (tRPC over `httpLink`, the
 * platform's error shape with `data.httpStatus`/`retryAfterSeconds`, better-auth's sign-in and token routes). The
 * service's own behaviour (gateways, verification) is tested by the server's e2e suite; here: what main sends, how each
 * answer reaches the renderer, and that only the gateway link the server gave for the document's CID may be opened
 * outside.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { DocumentDto } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { GatewayLink } from '../common/bridge';
import { clientErrorFrom } from '../common/errors';
import type { IpcResult } from '../common/ipc';
import { translator } from '../renderer/i18n';
import { ipfsImportErrorText } from '../renderer/ipfs';
import { MainController } from './controller';
import { BrowserWindow, ipcMain, shell } from './electron-stand-in.testing';
import { registerIpcHandlers } from './ipc';
import { isAppUrl } from './navigation';

vi.mock('electron', () => import('./electron-stand-in.testing'));

const APP = 'app://notary/index.html';
/** CIDv1 (raw, sha2-256) of `hello world`, and the CIDv0 of the go-ipfs readme folder. */
const CID = 'bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e';
const CID_V0 = 'QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG';
/** CIDs the stand-in refuses, each with one of the endpoint's errors (raw CIDs of their names' bytes). */
const FOLDER = 'bafybeigdyrzt5sxp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi';
const LYING = 'bafkreiers5syjqwvmojqm5zpmfr4ttszsmjugervkuygrwg2cnltjov7t4';
const LIMITED = 'bafkreigssias5m3wtixwbkylfbmicq6mdkjwwn6pmotwmn7gi234gt5f2e';
const TOO_LARGE = 'bafkreianrpezevqb7b3zhz62dkftldi3z23nd64vz7ou7vb7vtrodjq6ae';
const GATEWAY = 'https://gateway.example';
const DOC_ID = '0b6f2c1e-7d5a-4e8b-9c3f-2a1d4e5f6a7b';
const UPLOAD_ID = '1c7f3d2f-8e6b-4f9c-8d4a-3b2e5f6a7b8c';

function documentDto(id: string, sourceType: 'ipfs' | 'upload', cid: string | null): DocumentDto {
  const now = new Date().toISOString();
  return {
    id,
    serialNumber: 'CARTORIO-7K2M9Q4XTB',
    fileName: 'contrato.pdf',
    fileSize: 11,
    mimeType: 'application/pdf',
    sha256Hash: 'b94d27b9934d3e08a52e52d7da7dabfac484efe37a5380ee9088f7ace2efcde9',
    sourceType,
    sourceUri: cid ? `ipfs://${cid}` : null,
    screenshot: null,
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

/** What the stand-in answers `documents.importIpfs` with, by CID (the platform's tRPC error shape). */
const IMPORT_ERRORS: Record<string, { status: number; body: unknown; headers?: Record<string, string> }> = {
  // A folder's CID: well-formed, so only the server can tell.
  [FOLDER]: trpcError(400, 'BAD_REQUEST', 'cid: bafybei… does not name a file: a directory'),
  [LYING]: trpcError(502, 'BAD_GATEWAY', 'Block bafkrei… does not match its CID'),
  [LIMITED]: {
    ...trpcError(429, 'RATE_LIMITED', 'Too many requests (ipfsImport limit)', { retryAfterSeconds: 41 }),
    headers: { 'retry-after': '41' },
  },
  [TOO_LARGE]: trpcError(413, 'PAYLOAD_TOO_LARGE', 'The file exceeds 250 MB'),
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

describe('IPFS import and gateway links through main (IPC, controller, client)', () => {
  let server: Server;
  let base: string;
  let userData: string;
  let unregister: () => void;
  let controller: MainController;
  const imports: unknown[] = [];
  /** The view URL the stand-in gives for the IPFS document (a test may make it lie). */
  let viewUrl = `${GATEWAY}/ipfs/${CID}?filename=contrato.pdf`;

  beforeAll(async () => {
    server = createServer(async (req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      const body = await readBody(req);
      const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(value));
      };
      const input = () => JSON.parse(url.searchParams.get('input') ?? 'null') as { id?: string };
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
        case '/trpc/documents.get': {
          const id = input().id;
          const doc =
            id === DOC_ID ? documentDto(DOC_ID, 'ipfs', CID) : documentDto(UPLOAD_ID, 'upload', null);
          return json(200, { result: { data: { document: doc } } });
        }
        case '/trpc/documents.view':
          return json(200, { result: { data: { viewUrl, inline: true, expiresInSeconds: 300 } } });
        case '/trpc/documents.importIpfs': {
          const request = JSON.parse(body) as { cid: string; fileName?: string };
          imports.push(request);
          const error = IMPORT_ERRORS[request.cid];
          if (error) return json(error.status, error.body, error.headers);
          return json(200, { result: { data: documentDto(DOC_ID, 'ipfs', request.cid) } });
        }
        default:
          return json(404, { message: 'Not found', code: 'NOT_FOUND' });
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    userData = await mkdtemp(path.join(os.tmpdir(), 'notary-ipfs-'));
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

  it('imports a CID: sends {cid, fileName, consent: true} and answers the Document', async () => {
    const result = await invoke<DocumentDto>('documents:import-ipfs', {
      cid: CID,
      fileName: 'contrato.pdf',
      consent: true,
    });
    expect(result).toMatchObject({ ok: true, value: { sourceType: 'ipfs', sourceUri: `ipfs://${CID}` } });
    const v0 = await invoke<DocumentDto>('documents:import-ipfs', { cid: CID_V0, consent: true });
    expect(v0.ok).toBe(true);
    expect(imports).toEqual([
      { cid: CID, consent: true, fileName: 'contrato.pdf' },
      { cid: CID_V0, consent: true },
    ]);
  });

  it('refuses a malformed CID or missing consent in main, before any request', async () => {
    const before = imports.length;
    for (const payload of [
      { cid: `ipfs://${CID}`, consent: true },
      { cid: CID.toUpperCase(), consent: true },
      { cid: CID, consent: false },
    ]) {
      const result = await invoke('documents:import-ipfs', payload);
      expect(result).toMatchObject({ ok: false, error: { kind: 'invalid-input' } });
    }
    expect(imports.length).toBe(before);
  });

  it.each([
    [
      'a folder (400)',
      FOLDER,
      'bad-request',
      400,
      undefined,
      'The server refused the CID: only the CID of a file (not of a folder), CIDv0 (Qm…) or CIDv1 in base32 (b…).',
    ],
    [
      'a lying gateway (502)',
      LYING,
      'bad-gateway',
      502,
      undefined,
      'The IPFS gateway failed or returned content that does not match the CID; nothing was recorded.',
    ],
    ['the rate limit (429)', LIMITED, 'rate-limited', 429, 41, 'Too many imports; try again in 41 s.'],
    [
      'over 250 MB (413)',
      TOO_LARGE,
      'too-large',
      413,
      undefined,
      'The file on IPFS exceeds the 250 MB limit; nothing was recorded.',
    ],
  ])('answers %s as a sentence', async (_what, cid, kind, status, retryAfterSeconds, sentence) => {
    const result = await invoke('documents:import-ipfs', { cid, consent: true });
    if (result.ok) throw new Error('expected a failure');
    expect(result.error).toMatchObject({ kind, status, ...(retryAfterSeconds ? { retryAfterSeconds } : {}) });
    // The renderer rebuilds the error from the envelope and says it.
    expect(ipfsImportErrorText(translator('en'), clientErrorFrom(result.error), base)).toBe(sentence);
  });

  it("gives an imported document's gateway link, which then (and only then) opens outside", async () => {
    const other = `${GATEWAY}/ipfs/${CID}?filename=other.pdf`;
    expect(await invoke('shell:open-external', { url: viewUrl })).toMatchObject({
      ok: false,
      error: { kind: 'forbidden' },
    });
    const link = await invoke<GatewayLink>('documents:gateway-link', { id: DOC_ID });
    expect(link).toEqual({ ok: true, value: { cid: CID, url: viewUrl } });
    expect(await invoke('shell:open-external', { url: viewUrl })).toEqual({ ok: true, value: null });
    expect(shell.opened.at(-1)).toBe(viewUrl);
    expect(await invoke('shell:open-external', { url: other })).toMatchObject({ ok: false });
  });

  it('gives no gateway link for an upload, nor one that does not name the CID', async () => {
    expect(await invoke('documents:gateway-link', { id: UPLOAD_ID })).toMatchObject({
      ok: false,
      error: { kind: 'bad-request' },
    });
    viewUrl = 'https://phishing.example/ipfs/QmYwAPJzv5CZsnA625s3Xf2nemtYgPpHdWEz79ojWnPbdG';
    expect(await invoke('documents:gateway-link', { id: DOC_ID })).toMatchObject({
      ok: false,
      error: { kind: 'server' },
    });
    expect(await invoke('shell:open-external', { url: viewUrl })).toMatchObject({ ok: false });
  });
});
