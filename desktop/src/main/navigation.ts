import { shell, type WebContents } from 'electron';

/** The renderer is served by main under this privileged scheme (`protocol.ts`), never from `file://`. */
export const APP_SCHEME = 'app';
export const APP_HOST = 'notary';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_ENTRY = `${APP_ORIGIN}/index.html`;

/**
 * Public explorers the app links to (spec, Other shapes: on-chain info; see also docs/anchoring.md): the
 * explorer and attestation
 * prefixes the server announces are allowed too, so another network needs no new build.
 */
export const EXPLORER_HOSTS: readonly string[] = [
  'etherscan.io',
  'basescan.org',
  'optimistic.etherscan.io',
  'easscan.org',
  'explorer.hiro.so',
];

function parse(url: string): URL | null {
  if (typeof url !== 'string' || url.length > 4096) return null;
  try {
    return new URL(url);
  } catch {
    return null;
  }
}

/** True for a page of the app itself (`app://notary/...`): the only place the window may navigate. */
export function isAppUrl(url: string): boolean {
  const u = parse(url);
  return u !== null && u.protocol === `${APP_SCHEME}:` && u.hostname === APP_HOST && !u.username && !u.port;
}

export interface ExternalContext {
  /** The configured service (the public record link points there). */
  serverUrl: string;
  /** Explorer and attestation prefixes announced by `GET /api/onchain/info` (empty on the devnet). */
  prefixes: readonly string[];
}

function hostMatches(host: string, allowed: string): boolean {
  return host === allowed || host.endsWith(`.${allowed}`);
}

/**
 * Whether a link may be opened in the system browser: http(s) without credentials, and either the
 * configured server's origin, a known public explorer over https (and its subdomains), or under a prefix the
 * server announced. Everything else (file:, javascript:, custom schemes, other sites) is refused.
 */
export function isExternalAllowed(url: string, context: ExternalContext): boolean {
  const u = parse(url);
  if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:') || u.username || u.password) return false;
  const server = parse(context.serverUrl);
  if (server && u.origin === server.origin) return true;
  if (u.protocol === 'https:' && EXPLORER_HOSTS.some((h) => hostMatches(u.hostname, h))) return true;
  return context.prefixes.some((prefix) => {
    const p = parse(prefix);
    if (!p || (p.protocol !== 'https:' && p.protocol !== 'http:') || p.username) return false;
    const base = p.href.endsWith('/') ? p.href : `${p.href}/`;
    return u.origin === p.origin && (u.href === p.href || u.href.startsWith(base));
  });
}

/**
 * Locks a window's navigation down (Electron security checklist 13 and 14): in-window navigation only to
 * the app's own pages; `window.open` and target=_blank never create windows, allowed links go to the system
 * browser instead; `<webview>` is refused.
 */
export function installNavigationGuards(contents: WebContents, context: () => ExternalContext): void {
  const openOutside = (url: string) => {
    if (isExternalAllowed(url, context())) void shell.openExternal(url);
  };
  contents.on('will-navigate', (event, url) => {
    if (isAppUrl(url)) return;
    event.preventDefault();
    openOutside(url);
  });
  contents.on('will-redirect', (event, url) => {
    if (!isAppUrl(url)) event.preventDefault();
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    openOutside(url);
    return { action: 'deny' };
  });
}
