import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AppSettings } from '../common/bridge';
import { ClientError } from '../common/errors';
import type { IpcResult } from '../common/ipc';
import { errorText, translator } from '../renderer/i18n';
import { MainController } from './controller';
import { BrowserWindow, ipcMain } from './electron-stand-in.testing';
import { registerIpcHandlers } from './ipc';
import { isAppUrl } from './navigation';
import { DEFAULT_SERVER_URL, isLoopbackUrlHost, normalizeServerUrl, SettingsStore } from './settings';

vi.mock('electron', () => import('./electron-stand-in.testing'));

const APP = 'app://notary/index.html';

describe('server URL: https, or http only on loopback', () => {
  it.each([
    ['https://notary.example.com/', 'https://notary.example.com'],
    ['https://notary.example.com:8443/cartorio/', 'https://notary.example.com:8443/cartorio'],
    ['http://localhost:3000', 'http://localhost:3000'],
    ['http://LOCALHOST:3000/', 'http://localhost:3000'],
    ['http://127.0.0.1:3000', 'http://127.0.0.1:3000'],
    ['http://127.45.6.7', 'http://127.45.6.7'],
    ['http://127.1:3000', 'http://127.0.0.1:3000'],
    ['http://2130706433:3000', 'http://127.0.0.1:3000'],
    ['http://[::1]:3000', 'http://[::1]:3000'],
    ['http://[0:0:0:0:0:0:0:1]:3000', 'http://[::1]:3000'],
    ['  https://10.0.0.5  ', 'https://10.0.0.5'],
  ])('accepts %s as %s', (input, expected) => {
    expect(normalizeServerUrl(input)).toBe(expected);
  });

  it.each([
    'http://notary.example.com',
    'http://10.0.0.5:3000',
    'http://192.168.1.20:3000',
    'http://0.0.0.0:3000',
    'http://128.0.0.1',
    'http://[::2]:3000',
    'http://[::ffff:127.0.0.1]:3000',
    'http://localhost.example.com',
    'http://127.0.0.1.nip.io',
    'http://evil.localhost.example',
  ])('refuses %s with a sentence saying why', (input) => {
    let error: unknown;
    try {
      normalizeServerUrl(input);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ClientError);
    expect((error as ClientError).kind).toBe('insecure-url');
    expect((error as ClientError).message).toMatch(
      /^Refused http:\/\/.+: plain http would send the notary's session token in clear over the network; use https:\/\/, or http:\/\/ only for this computer \(localhost, 127\.0\.0\.0\/8, ::1\)\.$/,
    );
    expect(errorText(translator('en'), error as ClientError, '')).toMatch(/plain http would send/);
  });

  it.each([
    ['not a URL', 'notary.example.com'],
    ['ftp', 'ftp://notary.example.com'],
    ['a file URL', 'file:///etc/passwd'],
    ['credentials', 'https://ana:secret@notary.example.com'],
    ['a query', 'https://notary.example.com/?x=1'],
    ['a fragment', 'https://notary.example.com/#x'],
  ])('refuses %s (invalid-input, with a reason)', (_what, input) => {
    expect(() => normalizeServerUrl(input)).toThrow(
      expect.objectContaining({ kind: 'invalid-input', message: expect.stringMatching(/^The |^This /) }),
    );
  });

  it('knows loopback names as URL parses them', () => {
    expect(
      ['localhost', 'localhost.', '127.0.0.1', '127.255.255.254', '[::1]'].map(isLoopbackUrlHost),
    ).toEqual([true, true, true, true, true]);
    expect(['::1', '127.0.0.256', '1.127.0.0', 'localhost6', ''].map(isLoopbackUrlHost)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('server URL through IPC and the settings file', () => {
  let userData: string;
  let unregister: () => void;
  const win = new BrowserWindow({});

  beforeAll(async () => {
    userData = await mkdtemp(path.join(os.tmpdir(), 'notary-settings-'));
    const controller = new MainController({
      userDataDir: userData,
      tempDir: userData,
      documentsDir: userData,
      window: () => win as unknown as Electron.BrowserWindow,
    });
    unregister = registerIpcHandlers(controller.handlers(), (e) => isAppUrl(e.senderFrame?.url ?? ''));
  });
  afterAll(async () => {
    unregister?.();
    await rm(userData, { recursive: true, force: true });
  });

  it('keeps the previous server when an insecure one is refused', async () => {
    const set = (url: string) =>
      ipcMain.invoke('settings:set-server-url', APP, { url }) as Promise<IpcResult<AppSettings>>;
    expect(await set('https://notary.example.com/')).toMatchObject({
      ok: true,
      value: { serverUrl: 'https://notary.example.com' },
    });
    const refused = await set('http://notary.example.com');
    expect(refused).toMatchObject({ ok: false, error: { kind: 'insecure-url' } });
    expect(refused.ok === false && refused.error.message).toContain('session token in clear');
    const saved = JSON.parse(await readFile(path.join(userData, 'settings.json'), 'utf8'));
    expect(saved.serverUrl).toBe('https://notary.example.com');
    expect(await ipcMain.invoke('settings:get', APP)).toMatchObject({
      ok: true,
      value: { serverUrl: 'https://notary.example.com' },
    });
  });

  it('does not use an insecure URL left in a settings file (older version, hand edit)', async () => {
    const file = path.join(userData, 'edited.json');
    await writeFile(file, JSON.stringify({ serverUrl: 'http://192.168.1.20:3000', language: 'en' }));
    expect(await new SettingsStore(file).get()).toMatchObject({
      serverUrl: DEFAULT_SERVER_URL,
      language: 'en',
    });
  });
});
