/**
 * A minimal stand-in for the `electron` module, for Node tests of main-process logic (the Electron binary
 * cannot run here). Only what main's modules touch: `safeStorage` (real AES-256-GCM with a per-process key,
 * so "encrypted" really means encrypted), `ipcMain` (a handler table the test can invoke), `shell` and
 * `dialog` (recorded, answers set by the test), `protocol`, and `WebContents`-like objects.
 *
 * Use: `vi.mock('electron', () => import('<path>/electron-stand-in.testing'))`.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';

/* ---------------------------------------------------------------- safeStorage */

const key = randomBytes(32);
export const safeStorageState = {
  available: true,
  backend: 'gnome_libsecret' as string,
  encryptCalls: 0,
};

export const safeStorage = {
  isEncryptionAvailable: () => safeStorageState.available,
  getSelectedStorageBackend: () => safeStorageState.backend,
  encryptString(plain: string): Buffer {
    if (!safeStorageState.available) throw new Error('Encryption is not available');
    safeStorageState.encryptCalls += 1;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    // Chromium's OSCrypt prefixes its ciphertexts with a version tag; so do we.
    return Buffer.concat([Buffer.from('v11'), iv, cipher.getAuthTag(), body]);
  },
  decryptString(encrypted: Buffer): string {
    if (encrypted.subarray(0, 3).toString() !== 'v11')
      throw new Error('Error while decrypting the ciphertext');
    const iv = encrypted.subarray(3, 15);
    const tag = encrypted.subarray(15, 31);
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(encrypted.subarray(31)), decipher.final()]).toString('utf8');
  },
};

/* ---------------------------------------------------------------- ipcMain */

export type InvokeHandler = (event: unknown, ...args: unknown[]) => unknown;

export const ipcMain = {
  handlers: new Map<string, InvokeHandler>(),
  handle(channel: string, handler: InvokeHandler): void {
    if (this.handlers.has(channel))
      throw new Error(`Attempted to register a second handler for '${channel}'`);
    this.handlers.set(channel, handler);
  },
  removeHandler(channel: string): void {
    this.handlers.delete(channel);
  },
  /** What `ipcRenderer.invoke` would get, from a frame at `frameUrl`. */
  async invoke(channel: string, frameUrl: string, ...args: unknown[]): Promise<unknown> {
    const handler = this.handlers.get(channel);
    if (!handler) throw new Error(`No handler registered for '${channel}'`);
    return handler({ senderFrame: { url: frameUrl, parent: null }, sender: {} }, ...args);
  },
};

/* ---------------------------------------------------------------- shell, dialog */

export const shell = {
  opened: [] as string[],
  openedPaths: [] as string[],
  async openExternal(url: string): Promise<void> {
    this.opened.push(url);
  },
  async openPath(path: string): Promise<string> {
    this.openedPaths.push(path);
    return '';
  },
};

export const dialog = {
  /** The next answers of the save and open dialogs (null: cancelled). */
  nextSavePath: null as string | null,
  nextOpenPaths: null as string[] | null,
  /** Options of every save dialog shown (`defaultPath`: the suggested name). */
  saveDialogs: [] as { defaultPath?: string }[],
  async showSaveDialog(...args: unknown[]) {
    // `(window, options)` or `(options)`, like Electron.
    this.saveDialogs.push((args.at(-1) ?? {}) as { defaultPath?: string });
    const filePath = this.nextSavePath;
    return filePath ? { canceled: false, filePath } : { canceled: true, filePath: '' };
  },
  async showOpenDialog(..._args: unknown[]) {
    const filePaths = this.nextOpenPaths;
    return filePaths ? { canceled: false, filePaths } : { canceled: true, filePaths: [] };
  },
};

/* ---------------------------------------------------------------- protocol, app, windows */

export const protocol = {
  handlers: new Map<string, (request: Request) => Promise<Response> | Response>(),
  registerSchemesAsPrivileged(_schemes: unknown[]): void {},
  handle(scheme: string, handler: (request: Request) => Promise<Response> | Response): void {
    this.handlers.set(scheme, handler);
  },
};

/** A `WebContents` with the events and the window-open handler navigation.ts uses, plus `send`. */
export class StandInWebContents extends EventEmitter {
  windowOpenHandler: ((details: { url: string }) => { action: 'allow' | 'deny' }) | null = null;
  sent: { channel: string; payload: unknown }[] = [];

  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'allow' | 'deny' }): void {
    this.windowOpenHandler = handler;
  }

  send(channel: string, payload?: unknown): void {
    this.sent.push({ channel, payload });
  }

  /** Emits `event` like Electron does; returns whether a listener called `preventDefault()`. */
  fire(event: string, ...args: unknown[]): boolean {
    let prevented = false;
    this.emit(event, { preventDefault: () => (prevented = true) }, ...args);
    return prevented;
  }
}

export class BrowserWindow {
  webContents = new StandInWebContents();
  constructor(readonly options: unknown) {}
}

export const app = {
  getPath: (_name: string) => '/nonexistent',
};

export default { safeStorage, ipcMain, shell, dialog, protocol, app, BrowserWindow };
