import path from 'node:path';
import { BrowserWindow, type WebPreferences } from 'electron';
import { APP_ENTRY, type ExternalContext, installNavigationGuards } from './navigation';

/**
 * The renderer's web preferences (Electron security checklist): context isolation, the OS sandbox, no Node
 * in the page, web security on, no `<webview>`, no navigation by dropping a file. The preload is the only
 * bridge.
 */
export function secureWebPreferences(preload: string): WebPreferences {
  return {
    preload,
    contextIsolation: true,
    sandbox: true,
    nodeIntegration: false,
    nodeIntegrationInWorker: false,
    nodeIntegrationInSubFrames: false,
    webSecurity: true,
    allowRunningInsecureContent: false,
    webviewTag: false,
    navigateOnDragDrop: false,
    spellcheck: false,
    devTools: !process.env.NOTARY_NO_DEVTOOLS,
  };
}

/** Opens the app window on `app://notary/index.html`, with navigation locked down. */
export function createMainWindow(options: {
  preload: string;
  icon: string;
  external: () => ExternalContext;
}) {
  const win = new BrowserWindow({
    width: 1280,
    height: 840,
    minWidth: 960,
    minHeight: 640,
    show: false,
    title: 'Notary',
    backgroundColor: '#f4f6fa',
    icon: path.resolve(options.icon),
    autoHideMenuBar: true,
    webPreferences: secureWebPreferences(options.preload),
  });
  installNavigationGuards(win.webContents, options.external);
  win.once('ready-to-show', () => win.show());
  void win.loadURL(APP_ENTRY);
  return win;
}
