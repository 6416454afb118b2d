import type { Bridge, Language, SessionState } from '../../common/bridge';
import type { NotaryClient } from '../../common/client';
import { ClientError } from '../../common/errors';

const STORAGE = {
  language: 'notary.language',
  lastEmail: 'notary.lastEmail',
  // Non-secret marker: "a session was open here", so that a refused cookie reads as "expired", not "new".
  hadSession: 'notary.hadSession',
} as const;

function storageGet(key: string): string | null {
  try {
    return localStorage.getItem(key);
  } catch {
    return null;
  }
}
function storageSet(key: string, value: string | null): void {
  try {
    if (value === null) localStorage.removeItem(key);
    else localStorage.setItem(key, value);
  } catch {
    // Storage disabled (private mode policies): preferences simply do not persist.
  }
}

/** The web bridge's settings and session methods. */
export type WebSession = Pick<
  Bridge,
  | 'getSettings'
  | 'setServerUrl'
  | 'setLanguage'
  | 'checkServer'
  | 'requestCode'
  | 'signIn'
  | 'currentSession'
  | 'setTenant'
  | 'signOut'
  | 'onSessionExpired'
>;

/**
 * Settings and session of the web client: the server is the page's own (`serverUrl`, not editable); the
 * language, the last e-mail and a "had a session" marker live in `localStorage`; the session itself is the
 * server's HttpOnly cookie, through `client`.
 * @param expiredListeners the set `client`'s `onSessionExpired` calls: `onSessionExpired` adds to it.
 */
export function webSession(
  client: NotaryClient,
  serverUrl: string,
  expiredListeners: Set<() => void>,
): WebSession {
  const signedIn = <T>(value: T): T => {
    storageSet(STORAGE.hadSession, '1');
    return value;
  };
  return {
    getSettings: async () => ({
      serverUrl,
      language: (storageGet(STORAGE.language) as Language | null) ?? null,
      serverUrlEditable: false,
      tokenModulePath: null,
    }),
    setServerUrl: async () => {
      throw new ClientError({
        kind: 'bad-request',
        message: 'The web client always uses the server that served it',
      });
    },
    setLanguage: async (language) => storageSet(STORAGE.language, language),
    checkServer: async () => {
      await client.health();
    },
    requestCode: async (email) => {
      await client.requestCode(email);
      storageSet(STORAGE.lastEmail, email);
    },
    signIn: async (email, code) => signedIn(await client.signIn(email, code)),
    currentSession: async (): Promise<SessionState> => {
      const lastEmail = storageGet(STORAGE.lastEmail);
      const session = await client.session();
      if (session) return { state: 'signed-in', session: signedIn(session) };
      const expired = storageGet(STORAGE.hadSession) === '1';
      storageSet(STORAGE.hadSession, null);
      return { state: 'signed-out', expired, lastEmail };
    },
    setTenant: (orgId) => client.setTenant(orgId),
    signOut: async () => {
      storageSet(STORAGE.hadSession, null);
      await client.signOut();
    },
    onSessionExpired: (listener) => {
      const wrapped = () => {
        storageSet(STORAGE.hadSession, null);
        listener();
      };
      expiredListeners.add(wrapped);
      return () => expiredListeners.delete(wrapped);
    },
  };
}
