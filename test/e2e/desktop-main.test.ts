/**
 * The Electron main process of the desktop client against the real service: every step goes through the named IPC
 * channels exactly as the preload calls them (validated payloads, `IpcResult` envelopes), with the `electron` module
 * replaced by the stand-in (safeStorage really encrypts; dialogs and the shell are recorded). Sign-in with the code
 * from the development mailbox, the session token encrypted at rest and reused by a "restarted" app, upload streamed
 * from disk, list, hash comparison, certificate saved and opened, the timestamp route's 503 on the embedded defaults,
 * and a refused renewal ending the session.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DocumentDto, DocumentListDto } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalFile, SessionInfo, SessionState } from '../../desktop/src/common/bridge';
import { NotaryClient } from '../../desktop/src/common/client';
import { EVENTS, type IpcResult } from '../../desktop/src/common/ipc';
import { MainController } from '../../desktop/src/main/controller';
import {
  BrowserWindow,
  dialog,
  ipcMain,
  safeStorage,
  shell,
} from '../../desktop/src/main/electron-stand-in.testing';
import { registerIpcHandlers } from '../../desktop/src/main/ipc';
import { isAppUrl } from '../../desktop/src/main/navigation';
import { mailbox, mailedCode } from '../harness/dev-mailbox';
import { FIXTURES_DIR, sha256sum } from '../harness/fixtures';
import { startTestService, type TestService } from '../harness/service';
import { freshEmail } from '../harness/tenants';

vi.mock('electron', () => import('../../desktop/src/main/electron-stand-in.testing'));

const APP = 'app://notary/index.html';
const PDF = path.join(FIXTURES_DIR, 'pdfs/tracemonkey.pdf');
const OTHER = path.join(FIXTURES_DIR, 'files/contrato.txt');

/** `ipcRenderer.invoke` from the app's page, unwrapped (throws the error envelope's data). */
async function invoke<T>(channel: string, payload?: unknown): Promise<T> {
  const result = (await (payload === undefined
    ? ipcMain.invoke(channel, APP)
    : ipcMain.invoke(channel, APP, payload))) as IpcResult<T>;
  if (!result.ok) throw Object.assign(new Error(result.error.message), result.error);
  return result.value;
}

describe('desktop main process against the real service (IPC, stand-in electron)', () => {
  let t: TestService;
  let userData: string;
  let unregister: (() => void) | undefined;
  let controller: MainController;
  const win = new BrowserWindow({});
  const email = freshEmail('escrevente');
  let doc: DocumentDto;

  /** A fresh main process on the same user data directory (an app restart). */
  const startMain = () => {
    unregister?.();
    controller?.close();
    controller = new MainController({
      userDataDir: userData,
      tempDir: path.join(userData, 'tmp'),
      documentsDir: userData,
      window: () => win as unknown as Electron.BrowserWindow,
    });
    unregister = registerIpcHandlers(controller.handlers(), (e) => isAppUrl(e.senderFrame?.url ?? ''));
  };

  beforeAll(async () => {
    t = await startTestService('pglite', { MAIL_DEV: '1' });
    userData = await mkdtemp(path.join(os.tmpdir(), 'notary-desktop-'));
    startMain();
  });
  afterAll(async () => {
    unregister?.();
    controller?.close();
    await t?.close();
    await rm(userData, { recursive: true, force: true });
  });

  it('points at the server and signs in with the mailed code; the session token is encrypted at rest', async () => {
    const settings = await invoke<{ serverUrl: string }>('settings:set-server-url', { url: `${t.url}/` });
    expect(settings.serverUrl).toBe(t.url);
    expect(await invoke<SessionState>('auth:session')).toEqual({
      state: 'signed-out',
      expired: false,
      lastEmail: null,
    });
    const known = await mailbox(t.dataDir);
    await invoke('auth:request-code', { email });
    const code = await mailedCode(t.dataDir, email, known);
    const session = await invoke<SessionInfo>('auth:sign-in', { email, code });
    expect(session.me).toMatchObject({ email, tenantKind: 'personal', role: 'owner' });

    const bytes = await readFile(path.join(userData, 'session.bin'));
    const record = JSON.parse(safeStorage.decryptString(bytes)) as { origin: string; token: string };
    expect(record.origin).toBe(t.url);
    expect(record.token.length).toBeGreaterThan(20);
    expect(bytes.includes(Buffer.from(record.token))).toBe(false);
    expect((await stat(path.join(userData, 'session.bin'))).mode & 0o777).toBe(0o600);
    // Settings are plain (nothing secret in them).
    expect(await readFile(path.join(userData, 'settings.json'), 'utf8')).not.toContain(record.token);
  });

  it('keeps the session across a restart of the app', async () => {
    startMain();
    const state = await invoke<SessionState>('auth:session');
    expect(state.state).toBe('signed-in');
  });

  it('uploads a dropped file streamed from disk, with progress; the server stored exactly its bytes', async () => {
    const [file] = await invoke<LocalFile[]>('files:dropped', { paths: [PDF] });
    const jobId = crypto.randomUUID();
    const sentBefore = win.webContents.sent.length;
    doc = await invoke<DocumentDto>('files:upload', { fileId: file?.id, jobId, consent: true });
    expect(doc.sha256Hash).toBe(await sha256sum(PDF));
    expect(doc).toMatchObject({ fileName: 'tracemonkey.pdf', fileSize: 1016315, consentGiven: true });
    const progress = win.webContents.sent.slice(sentBefore).filter((s) => s.channel === EVENTS.progress);
    expect(progress.at(-1)?.payload).toEqual({ jobId, loaded: 1016315, total: 1016315 });
    const list = await invoke<DocumentListDto>('documents:list');
    expect(list).toEqual({ documents: [expect.objectContaining({ id: doc.id })], nextCursor: null });
    const verify = await invoke<{ found: boolean }>('public:verify', { hash: doc.sha256Hash });
    expect(verify.found).toBe(true);
  });

  it('compares local files with the record', async () => {
    const match = await invoke<{ hashMatches: boolean }>('documents:compare', {
      id: doc.id,
      hash: await sha256sum(PDF),
    });
    expect(match.hashMatches).toBe(true);
    const other = await invoke<{ hashMatches: boolean }>('documents:compare', {
      id: doc.id,
      hash: await sha256sum(OTHER),
    });
    expect(other.hashMatches).toBe(false);
  });

  it('saves the certificate where the save dialog says, and opens one in the system viewer', async () => {
    dialog.nextSavePath = path.join(userData, 'saved.pdf');
    const saved = await invoke<{ fileName: string; signed: string }>('certificate:save', {
      id: doc.id,
      language: 'pt',
    });
    expect(saved).toEqual({ fileName: 'saved.pdf', signed: 'none' });
    expect((await readFile(path.join(userData, 'saved.pdf'))).subarray(0, 5).toString()).toBe('%PDF-');

    dialog.nextSavePath = null; // the user cancels the dialog
    expect(await invoke('certificate:save', { id: doc.id, language: 'en' })).toBeNull();

    const opened = await invoke<{ fileName: string }>('certificate:open', { id: doc.id, language: 'en' });
    expect(opened.fileName).toBe(`certificate-${doc.serialNumber}.pdf`);
    expect(shell.openedPaths.at(-1)).toBe(path.join(userData, 'tmp', 'notary-certificates', opened.fileName));
  });

  it('reports the missing TSA of the embedded defaults as "unavailable"', async () => {
    await expect(invoke('timestamp:save', { id: doc.id })).rejects.toMatchObject({
      kind: 'unavailable',
      status: 503,
    });
  });

  it('maps 403 and 404 from the server', async () => {
    await expect(invoke('documents:get', { id: crypto.randomUUID() })).rejects.toMatchObject({
      kind: 'not-found',
      status: 404,
    });
    await expect(invoke('public:document', { serial: 'ZZ-0000000000' })).rejects.toMatchObject({
      kind: 'not-found',
    });
  });

  it('ends the session when the server refuses the renewal (the JWT is renewed on a clock moved forward)', async () => {
    // A client of its own (same code as main's), whose clock runs 10 minutes ahead, so its JWT is due.
    let token: string | null = null;
    let expired = 0;
    let offset = 0;
    const client = new NotaryClient({
      baseUrl: t.url,
      mode: 'bearer',
      store: {
        load: async () => token,
        save: async (value) => {
          token = value;
        },
      },
      onSessionExpired: () => {
        expired += 1;
      },
      now: () => Date.now() + offset,
    });
    const known = await mailbox(t.dataDir);
    await client.requestCode(email);
    await client.signIn(email, await mailedCode(t.dataDir, email, known));
    const first = await client.jwt();
    offset = 10 * 60_000;
    const renewed = await client.jwt();
    expect(renewed).not.toBe(first);
    // The server forgets every session (revoked, or expired after 7 days).
    await t.service.deps.db.fork().getConnection().execute('delete from auth.session');
    offset = 20 * 60_000;
    await expect(client.listDocuments()).rejects.toMatchObject({ kind: 'session-expired' });
    expect(expired).toBe(1);
    expect(token).toBeNull();
    client.close();
    // Main's own client learns it at its next call and tells the window.
    startMain();
    expect(await invoke<SessionState>('auth:session')).toMatchObject({ state: 'signed-out', expired: true });
  });
});
