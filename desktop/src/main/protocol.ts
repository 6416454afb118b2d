import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { protocol } from 'electron';
import { APP_HOST, APP_SCHEME } from './navigation';

/**
 * Content-Security-Policy of the renderer inside Electron. `connect-src 'none'`: the renderer makes no
 * network request at all; main does every HTTP call, so tokens never reach the page.
 */
export const RENDERER_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

/**
 * The file under `root` that an `app://notary/...` URL names, or null: another host, a path escaping
 * `root` (`..`, encoded or not), a NUL byte, or a malformed URL. `/` is `index.html`.
 */
export function resolveAppAsset(root: string, requestUrl: string): string | null {
  let url: URL;
  try {
    url = new URL(requestUrl);
  } catch {
    return null;
  }
  if (url.protocol !== `${APP_SCHEME}:` || url.hostname !== APP_HOST) return null;
  let pathname: string;
  try {
    pathname = decodeURIComponent(url.pathname);
  } catch {
    return null;
  }
  if (pathname.includes('\0') || pathname.includes('\\')) return null;
  const relative = pathname === '/' || pathname === '' ? 'index.html' : pathname.replace(/^\/+/, '');
  const base = path.resolve(root);
  const file = path.resolve(base, relative);
  if (file !== base && !file.startsWith(base + path.sep)) return null;
  return file;
}

/** Must run before `app.whenReady()`: `app:` behaves like https (secure context, standard URL parsing). */
export function registerAppSchemePrivileges(): void {
  protocol.registerSchemesAsPrivileged([
    { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: false } },
  ]);
}

/** Serves the built renderer (`dist/web`) at `app://notary/`, with the strict CSP on every answer. */
export function serveRenderer(root: string): void {
  protocol.handle(APP_SCHEME, async (request) => {
    const file = resolveAppAsset(root, request.url);
    if (!file) return new Response('Not found', { status: 404 });
    try {
      const body = await readFile(file);
      return new Response(new Uint8Array(body), {
        headers: {
          'content-type': TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
          'content-security-policy': RENDERER_CSP,
          'x-content-type-options': 'nosniff',
        },
      });
    } catch {
      return new Response('Not found', { status: 404 });
    }
  });
}
