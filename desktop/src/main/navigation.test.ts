import path from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { StandInWebContents, shell } from './electron-stand-in.testing';
import {
  APP_ENTRY,
  type ExternalContext,
  installNavigationGuards,
  isAppUrl,
  isExternalAllowed,
} from './navigation';
import { RENDERER_CSP, resolveAppAsset } from './protocol';
import { secureWebPreferences } from './window';

vi.mock('electron', () => import('./electron-stand-in.testing'));

const context: ExternalContext = {
  serverUrl: 'http://localhost:3000',
  prefixes: ['https://explorer.example.net/tx', 'https://scan.example.net/attestation/view'],
};

describe('navigation rules', () => {
  it.each([
    [APP_ENTRY, true],
    ['app://notary/', true],
    ['app://notary/index.html#/documents/1', true],
    ['app://notary.evil/index.html', false],
    ['app://evil/index.html', false],
    ['app://user@notary/index.html', false],
    ['file:///etc/passwd', false],
    ['https://notary/index.html', false],
    ['http://localhost:3000/app/', false],
    ['javascript:alert(1)', false],
    ['not a url', false],
  ])('isAppUrl(%s) is %s', (url, expected) => {
    expect(isAppUrl(url)).toBe(expected);
  });

  it.each([
    ['https://sepolia.etherscan.io/tx/0xabc', true],
    ['https://etherscan.io/tx/0xabc', true],
    ['https://base-sepolia.easscan.org/attestation/view/0x01', true],
    ['https://explorer.hiro.so/txid/0x01?chain=testnet', true],
    ['http://localhost:3000/api/public/documents/ACME-7K2M9Q4XTB', true],
    ['https://explorer.example.net/tx/0x01', true],
    ['https://explorer.example.net/tx', true],
    ['https://explorer.example.net/txother', false],
    ['https://explorer.example.net/admin', false],
    ['http://etherscan.io/tx/0xabc', false],
    ['https://etherscan.io.evil.example/tx', false],
    ['https://evil-etherscan.io/tx', false],
    ['https://user:pw@etherscan.io/tx', false],
    ['http://localhost:3001/', false],
    ['https://evil.example/', false],
    ['file:///etc/passwd', false],
    ['javascript:alert(1)', false],
    ['data:text/html,<script>alert(1)</script>', false],
    ['app://notary/index.html', false],
  ])('isExternalAllowed(%s) is %s', (url, expected) => {
    expect(isExternalAllowed(url, context)).toBe(expected);
  });

  describe('guards installed on a window', () => {
    let contents: StandInWebContents;
    beforeEach(() => {
      shell.opened.length = 0;
      contents = new StandInWebContents();
      installNavigationGuards(contents as unknown as Electron.WebContents, () => context);
    });

    it('lets the app navigate within itself', () => {
      expect(contents.fire('will-navigate', 'app://notary/index.html#/verify')).toBe(false);
      expect(shell.opened).toEqual([]);
    });

    it('keeps the window on the app for any other page, opening allowed links in the system browser', () => {
      expect(contents.fire('will-navigate', 'https://sepolia.etherscan.io/tx/0x01')).toBe(true);
      expect(contents.fire('will-navigate', 'https://evil.example/')).toBe(true);
      expect(contents.fire('will-navigate', 'file:///etc/passwd')).toBe(true);
      expect(shell.opened).toEqual(['https://sepolia.etherscan.io/tx/0x01']);
    });

    it('never opens a new window; allowed links go to the system browser', () => {
      expect(contents.windowOpenHandler?.({ url: 'https://explorer.hiro.so/txid/0x01' })).toEqual({
        action: 'deny',
      });
      expect(contents.windowOpenHandler?.({ url: 'https://evil.example/' })).toEqual({ action: 'deny' });
      expect(contents.windowOpenHandler?.({ url: 'app://notary/index.html' })).toEqual({ action: 'deny' });
      expect(shell.opened).toEqual(['https://explorer.hiro.so/txid/0x01']);
    });

    it('refuses redirects away from the app and <webview> tags', () => {
      expect(contents.fire('will-redirect', 'https://evil.example/')).toBe(true);
      expect(contents.fire('will-attach-webview', {}, {})).toBe(true);
    });
  });
});

describe('window and renderer hardening', () => {
  it('turns on context isolation and the sandbox and keeps Node out of the page', () => {
    expect(secureWebPreferences('/app/preload.cjs')).toMatchObject({
      preload: '/app/preload.cjs',
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      navigateOnDragDrop: false,
    });
  });

  it('gives the renderer no network access of its own (main makes every request)', () => {
    expect(RENDERER_CSP).toContain("connect-src 'none'");
    expect(RENDERER_CSP).toContain("script-src 'self'");
    expect(RENDERER_CSP).not.toContain('unsafe-inline');
  });

  it.each([
    ['app://notary/', 'index.html'],
    ['app://notary/index.html', 'index.html'],
    ['app://notary/assets/index-abc.js', 'assets/index-abc.js'],
    ['app://notary/../../etc/passwd', 'etc/passwd'],
    ['app://notary/%2e%2e/%2e%2e/etc/passwd', 'etc/passwd'],
  ])('serves %s from the build folder', (url, relative) => {
    const root = '/opt/notary/dist/web';
    const resolved = resolveAppAsset(root, url);
    // `new URL` resolves `..` (plain or %2e) before we see it: the answer stays inside the root.
    expect(resolved).toBe(path.join(root, relative));
  });

  it.each([
    'app://notary/assets/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd',
    'app://notary/a%00.js',
    'app://notary/..%5c..%5cwindows',
    'app://other/index.html',
    'file:///etc/passwd',
    'app://notary/%E0%A4%A',
  ])('refuses %s', (url) => {
    expect(resolveAppAsset('/opt/notary/dist/web', url)).toBeNull();
  });
});
