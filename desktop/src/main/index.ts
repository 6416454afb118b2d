/**
 * Electron main process: the composition root. Serves the built renderer at `app://notary/`, opens the one
 * window, registers the named IPC handlers and denies every permission request (camera, notifications...)
 * the app never needs. Bundled to `dist/main/index.cjs` by `scripts/build.ts`.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { app, type BrowserWindow, session } from 'electron';
import { MainController } from './controller';
import { registerIpcHandlers } from './ipc';
import { isAppUrl } from './navigation';
import { registerAppSchemePrivileges, serveRenderer } from './protocol';
import { createMainWindow } from './window';

// `dist/main/index.cjs` -> `dist/`.
const distDir = path.resolve(__dirname, '..');
let mainWindow: BrowserWindow | null = null;

registerAppSchemePrivileges();
app.enableSandbox();

// One instance: a second launch focuses the first window instead of opening a second session.
if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  app.on('second-instance', () => {
    if (!mainWindow) return;
    if (mainWindow.isMinimized()) mainWindow.restore();
    mainWindow.focus();
  });

  app.on('web-contents-created', (_event, contents) => {
    contents.on('will-attach-webview', (event) => event.preventDefault());
  });

  void app.whenReady().then(() => {
    // Nothing but writing to the clipboard (the copy buttons of hashes and serials) is ever granted.
    const allowed = (permission: string) => permission === 'clipboard-sanitized-write';
    session.defaultSession.setPermissionRequestHandler((_contents, permission, callback) =>
      callback(allowed(permission)),
    );
    session.defaultSession.setPermissionCheckHandler((_contents, permission) => allowed(permission));
    serveRenderer(path.join(distDir, 'web'));

    const controller = new MainController({
      userDataDir: app.getPath('userData'),
      tempDir: app.getPath('temp'),
      documentsDir: app.getPath('documents'),
      window: () => mainWindow,
      // Bundled beside this file by scripts/build.ts: the only code that parses a certificate PDF.
      certificateWorker: pathToFileURL(path.join(__dirname, 'certificate-worker.cjs')),
    });
    // Only the app's own top-level page may call main.
    registerIpcHandlers(controller.handlers(), (event) => {
      const frame = event.senderFrame;
      return frame !== null && frame.parent === null && isAppUrl(frame.url);
    });

    const open = () => {
      mainWindow = createMainWindow({
        preload: path.join(distDir, 'preload', 'index.cjs'),
        // Linux shows it in the task bar; Windows and macOS take the packaged app's icon.
        icon: path.join(distDir, '..', 'build', 'icon.png'),
        external: () => controller.externalContext(),
      });
      mainWindow.on('closed', () => {
        mainWindow = null;
      });
    };
    open();
    app.on('activate', () => {
      if (!mainWindow) open();
    });
    app.on('before-quit', () => controller.close());
  });

  app.on('window-all-closed', () => {
    if (process.platform !== 'darwin') app.quit();
  });
}
