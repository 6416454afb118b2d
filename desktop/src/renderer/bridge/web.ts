import type { Bridge } from '../../common/bridge';
import { NotaryClient } from '../../common/client';
import { isClientError } from '../../common/errors';
import { webCertificateCheck } from './web-certificate-check';
import { webDocuments } from './web-documents';
import { fileRegistry, webFiles } from './web-files';
import { webSaves } from './web-saves';
import { webSession } from './web-session';

/** The service's base URL for a page served at `<base>/app/...`: the page's origin plus `<base>`. */
export function serverUrlFor(location: { href: string }): string {
  const url = new URL('..', location.href.replace(/#.*$/, ''));
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/**
 * The bridge of the web client (served by the server at `/app/`): the same UI in a browser. HTTP goes to the
 * page's own server; the session token stays in the server's HttpOnly cookie and the JWT in memory; files are
 * hashed here (WebCrypto / @noble/hashes) and uploaded with XHR; saves are browser downloads.
 */
export function webBridge(): Bridge {
  const serverUrl = serverUrlFor(window.location);
  const expiredListeners = new Set<() => void>();
  const client = new NotaryClient({
    baseUrl: serverUrl,
    mode: 'cookie',
    onSessionExpired: () => {
      for (const listener of expiredListeners) listener();
    },
  });
  const files = fileRegistry();
  return {
    platform: 'web',
    ...webSession(client, serverUrl, expiredListeners),
    ...webFiles(client, files),
    ...webCertificateCheck(files),
    ...webDocuments(client),
    ...webSaves(client),
  };
}

/** True for errors that mean "sign in again". */
export function needsSignIn(e: unknown): boolean {
  return isClientError(e) && (e.kind === 'session-expired' || e.kind === 'not-signed-in');
}
