/**
 * 429 from the real service (spec, Limits), as the desktop app shows it: the service runs as its own process (as
 * deployed, limits on), and every step goes through main's IPC handlers the way the preload calls them, down to the
 * sentence the renderer makes of the error envelope. Both faces: a tRPC procedure (public verification) and a REST
 * route (the streaming upload). The wait is whatever the service says (1 to 60 s).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { RATE_LIMITS } from '@notary/shared';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Child, startChild } from '../../../test/bench/lib';
import { mailbox, mailedCode } from '../../../test/harness/dev-mailbox';
import { FIXTURES_DIR } from '../../../test/harness/fixtures';
import type { LocalFile } from '../common/bridge';
import { clientErrorFrom } from '../common/errors';
import type { IpcResult } from '../common/ipc';
import { errorText, translator } from '../renderer/i18n';
import { MainController } from './controller';
import { BrowserWindow, ipcMain } from './electron-stand-in.testing';
import { registerIpcHandlers } from './ipc';
import { isAppUrl } from './navigation';

vi.mock('electron', () => import('./electron-stand-in.testing'));

const ROOT = path.resolve(import.meta.dirname, '../../..');
const NODE = path.join(ROOT, 'node_modules', '.bin', 'node');
const APP = 'app://notary/index.html';
const FILE = path.join(FIXTURES_DIR, 'files/contrato.txt');

/** `ipcRenderer.invoke` from the app's page: the envelope as the renderer gets it. */
function invoke<T>(channel: string, payload?: unknown): Promise<IpcResult<T>> {
  return (
    payload === undefined ? ipcMain.invoke(channel, APP) : ipcMain.invoke(channel, APP, payload)
  ) as Promise<IpcResult<T>>;
}

/** The value of a successful envelope. @throws Error with the envelope's error otherwise. */
function value<T>(result: IpcResult<T>): T {
  if (!result.ok) throw new Error(`${result.error.kind}: ${result.error.message}`);
  return result.value;
}

/** What the renderer shows for an error envelope (`bridge/electron.ts` rebuilds it, `ui.tsx` words it). */
function shown(result: IpcResult<unknown>, language: 'en' | 'pt'): string {
  if (result.ok) throw new Error('expected an error');
  return errorText(translator(language), clientErrorFrom(result.error), '');
}

describe('429 from the real service, through main, as the app words it', () => {
  let server: Child;
  let dataDir: string;
  let userData: string;
  let unregister: (() => void) | undefined;
  let controller: MainController;
  const win = new BrowserWindow({});

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'notary-desktop-429-'));
    userData = await mkdtemp(path.join(os.tmpdir(), 'notary-desktop-429-app-'));
    server = startChild('server', NODE, ['--import', 'tsx', 'server/src/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'test',
        HOST: '127.0.0.1',
        PORT: '0',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        ANCHORING: 'off',
        RATE_LIMITS: 'on',
        MAIL_DEV: '1',
      },
    });
    const [, port] = await server.waitForLine(/\[notary\] listening on https?:\/\/[^:/]+:(\d+)/, 120_000);
    controller = new MainController({
      userDataDir: userData,
      tempDir: userData,
      documentsDir: userData,
      window: () => win as unknown as Electron.BrowserWindow,
    });
    unregister = registerIpcHandlers(controller.handlers(), (e) => isAppUrl(e.senderFrame?.url ?? ''));
    value(await invoke('settings:set-server-url', { url: `http://127.0.0.1:${port}` }));
    // Signed in the way the app does it: the code comes from the service's development mailbox.
    const email = `escrevente.${crypto.randomUUID().slice(0, 8)}@example.com`;
    const known = await mailbox(dataDir);
    value(await invoke('auth:request-code', { email }));
    value(await invoke('auth:sign-in', { email, code: await mailedCode(dataDir, email, known) }));
  }, 180_000);

  afterAll(async () => {
    unregister?.();
    controller?.close();
    await server?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
    if (userData) await rm(userData, { recursive: true, force: true });
  });

  it(`tRPC: public verification number ${RATE_LIMITS.publicVerify + 1} in a minute shows the wait`, async () => {
    const verify = () =>
      invoke('public:verify', {
        hash: Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex'),
      });
    for (let i = 0; i < RATE_LIMITS.publicVerify; i++) value(await verify());
    const limited = await verify();
    expect(limited).toMatchObject({ ok: false, error: { kind: 'rate-limited', status: 429 } });
    const wait = limited.ok ? 0 : (limited.error.retryAfterSeconds ?? 0);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect(shown(limited, 'en')).toBe(`Too many requests; try again in ${wait} s.`);
    console.log(`[desktop 429] tRPC public.verify: "${shown(limited, 'en')}"`);
  });

  it(`REST: upload number ${RATE_LIMITS.upload + 1} in a minute shows the wait`, async () => {
    const [file] = value(await invoke<LocalFile[]>('files:dropped', { paths: [FILE] }));
    const upload = () =>
      invoke('files:upload', { fileId: file?.id, jobId: crypto.randomUUID(), consent: true });
    for (let i = 0; i < RATE_LIMITS.upload; i++) value(await upload());
    const limited = await upload();
    expect(limited).toMatchObject({ ok: false, error: { kind: 'rate-limited', status: 429 } });
    const wait = limited.ok ? 0 : (limited.error.retryAfterSeconds ?? 0);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(60);
    expect(shown(limited, 'en')).toBe(`Too many requests; try again in ${wait} s.`);
    expect(shown(limited, 'pt')).toBe(`Muitas solicitações; tente novamente em ${wait} s.`);
    console.log(`[desktop 429] REST upload: "${shown(limited, 'en')}"`);
  });
});
