import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import type { PreloadApi } from '../common/ipc';
import { App } from './App';
import { electronBridge } from './bridge/electron';
import { webBridge } from './bridge/web';
import './styles.css';

declare global {
  interface Window {
    /** Exposed by the Electron preload; absent in a browser. */
    notary?: PreloadApi;
  }
}

/** Electron when the preload exposed `window.notary`, else the browser implementation of the bridge. */
const bridge = window.notary ? electronBridge(window.notary) : webBridge();

const root = document.getElementById('root');
if (root) {
  createRoot(root).render(
    <StrictMode>
      <App bridge={bridge} />
    </StrictMode>,
  );
}
