import type { Bridge } from '../../common/bridge';
import { NotaryClient } from '../../common/client';
import { ClientError, isClientError } from '../../common/errors';
import { webCertificateCheck } from './web-certificate-check';
import { webDocuments } from './web-documents';
import { fileRegistry, webFiles } from './web-files';
import { webPkcs12Signing } from './web-pkcs12';
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
    ...webPkcs12Signing(client),
    ...desktopOnlyToken,
  };
}

/** A browser cannot reach PKCS#11: the A3 token is the desktop app's. */
const desktopOnlyToken: Pick<Bridge, 'setTokenModule' | 'tokenCertificates' | 'signWithToken'> = {
  setTokenModule: () => Promise.reject(tokenInBrowser()),
  tokenCertificates: () => Promise.reject(tokenInBrowser()),
  signWithToken: async ({ pin }) => {
    pin.fill(0);
    throw tokenInBrowser();
  },
};

function tokenInBrowser(): ClientError {
  return new ClientError({
    kind: 'invalid-input',
    message: 'A token (A3) is reached by the desktop app only; the web client signs with an A1 file',
  });
}

/** True for errors that mean "sign in again". */
export function needsSignIn(e: unknown): boolean {
  return isClientError(e) && (e.kind === 'session-expired' || e.kind === 'not-signed-in');
}
