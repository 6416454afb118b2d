import { DocumentSchema, LIMITS } from '@notary/shared';
import type {
  Bridge,
  Language,
  LocalFile,
  ProgressListener,
  SavedFile,
  SessionState,
} from '../../common/bridge';
import { isCaptureUrl } from '../../common/capture-url';
import {
  AnchorFileError,
  badAnchor,
  type ChainEndpoints,
  type CheckOptions,
  checkAgainstCertificate,
  endpointProblem,
  judgeAt,
  MAX_ANCHOR_FILE_BYTES,
  MAX_CERTIFICATE_BYTES,
  MAX_CHECKED_FILE_BYTES,
  trustAnchors,
} from '../../common/certificate-check';
import { isBareCid } from '../../common/cid';
import { NotaryClient } from '../../common/client';
import { ClientError, errorFromResponse, isClientError, offlineError } from '../../common/errors';
import { hashBlob } from './hash';

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

/** The service's base URL for a page served at `<base>/app/...`: the page's origin plus `<base>`. */
export function serverUrlFor(location: { href: string }): string {
  const url = new URL('..', location.href.replace(/#.*$/, ''));
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** Streams a `File` to `POST /api/documents/upload` with XHR (the only browser API with upload progress). */
function xhrUpload(
  url: string,
  jwt: string,
  file: File,
  onProgress: ProgressListener,
  signal: AbortSignal,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    xhr.setRequestHeader('authorization', `Bearer ${jwt}`);
    xhr.responseType = 'text';
    xhr.upload.onprogress = (e) =>
      onProgress({ loaded: e.loaded, total: e.lengthComputable ? e.total : file.size });
    xhr.onload = () => {
      let body: unknown;
      try {
        body = xhr.responseText ? JSON.parse(xhr.responseText) : undefined;
      } catch {
        body = undefined;
      }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body);
      else reject(errorFromResponse(xhr.status, body, { get: (name) => xhr.getResponseHeader(name) }));
    };
    xhr.onerror = () => reject(offlineError(new URL(url).origin, new TypeError('network error')));
    xhr.onabort = () => reject(new ClientError({ kind: 'cancelled', message: 'Upload cancelled' }));
    signal.addEventListener('abort', () => xhr.abort(), { once: true });
    // Consent first: the server has it before the file's bytes (spec: upload consent is mandatory).
    const form = new FormData();
    form.append('consent', 'true');
    form.append('file', file, file.name);
    xhr.send(form);
  });
}

/** Offers bytes as a download (`<a download>`): the browser saves them where its settings say. */
function downloadBytes(bytes: Uint8Array, fileName: string, type: string): void {
  const url = URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  a.rel = 'noopener';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/**
 * The bridge of the web client (served by the server at `/app/`): the same UI in a browser. HTTP goes to the
 * page's own server; the session token stays in the server's HttpOnly cookie and the JWT in memory; files are
 * hashed here (WebCrypto / @noble/hashes) and uploaded with XHR; saves are browser downloads.
 */
/** The bytes of a picked or dropped file. @throws ClientError `file` when the browser cannot read it. */
async function readBlob(blob: Blob): Promise<Uint8Array> {
  try {
    return new Uint8Array(await blob.arrayBuffer());
  } catch (e) {
    throw new ClientError({ kind: 'file', message: `Cannot read the file: ${String(e)}` });
  }
}

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
  const files = new Map<string, File>();
  const jobs = new Map<string, AbortController>();

  const register = (list: Iterable<File>): LocalFile[] =>
    Array.from(list, (file) => {
      const id = crypto.randomUUID();
      files.set(id, file);
      return { id, name: file.name, size: file.size };
    });
  const fileById = (id: string): File => {
    const file = files.get(id);
    if (!file) throw new ClientError({ kind: 'not-found', message: 'Unknown file: pick it again' });
    return file;
  };
  const runJob = async <T>(jobId: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const controller = new AbortController();
    jobs.set(jobId, controller);
    try {
      return await fn(controller.signal);
    } finally {
      jobs.delete(jobId);
    }
  };
  const signedIn = <T>(value: T): T => {
    storageSet(STORAGE.hadSession, '1');
    return value;
  };

  return {
    platform: 'web',
    getSettings: async () => ({
      serverUrl,
      language: (storageGet(STORAGE.language) as Language | null) ?? null,
      serverUrlEditable: false,
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
    pickFiles: () =>
      new Promise<LocalFile[]>((resolve) => {
        const input = document.createElement('input');
        input.type = 'file';
        input.multiple = true;
        input.addEventListener('change', () => resolve(register(input.files ?? [])), { once: true });
        input.addEventListener('cancel', () => resolve([]), { once: true });
        input.click();
      }),
    dropFiles: async (list) => register(list),
    hashFile: (fileId, jobId, onProgress) =>
      runJob(jobId, (signal) => hashBlob(fileById(fileId), onProgress, signal)),
    upload: (fileId, jobId, _consent, onProgress) =>
      runJob(jobId, async (signal) => {
        const file = fileById(fileId);
        if (file.size > LIMITS.maxUploadBytes) {
          throw new ClientError({
            kind: 'too-large',
            message: 'The file exceeds the 250 MB limit',
            status: 413,
          });
        }
        const body = await client.authorized((jwt) =>
          xhrUpload(client.uploadUrl(), jwt, file, onProgress, signal),
        );
        const doc = DocumentSchema.safeParse(body);
        if (!doc.success)
          throw new ClientError({ kind: 'server', message: 'Unexpected answer to the upload' });
        return doc.data;
      }),
    cancel: async (jobId) => jobs.get(jobId)?.abort(),
    publicVerify: (hash) => client.publicVerify(hash.toLowerCase()),
    checkCertificate: async (fileId, certificateId, endpoints: ChainEndpoints, options: CheckOptions) => {
      // The same checks as Electron main's IPC schema.
      const urls = [...endpoints.evmRpcUrls, ...endpoints.stacksApiUrls];
      if (urls.some((u) => endpointProblem(u) !== null)) {
        throw new ClientError({
          kind: 'invalid-input',
          message: 'An endpoint is not https (or loopback http)',
        });
      }
      const at = judgeAt(options.at);
      const file = fileById(fileId);
      const certificate = fileById(certificateId);
      if (file.size > MAX_CHECKED_FILE_BYTES || certificate.size > MAX_CERTIFICATE_BYTES) {
        throw new ClientError({ kind: 'too-large', message: 'The file exceeds the 250 MB limit' });
      }
      let anchors: Uint8Array[] | null;
      try {
        anchors = await trustAnchors(options.trust, async (id) => {
          const pem = fileById(id);
          if (pem.size > MAX_ANCHOR_FILE_BYTES) throw new AnchorFileError(pem.name, 'too-large');
          return { name: pem.name, bytes: await readBlob(pem) };
        });
      } catch (e) {
        if (e instanceof AnchorFileError) return badAnchor(e);
        throw e;
      }
      const [fileBytes, certificateBytes] = await Promise.all([readBlob(file), readBlob(certificate)]);
      return checkAgainstCertificate(fileBytes, certificateBytes, endpoints, {
        anchors,
        at,
      });
    },
    publicDocument: (serial) => client.publicDocument(serial.trim()),
    onchainInfo: () => client.onchainInfo(),
    listDocuments: (request) => client.listDocuments(request),
    getDocument: (id) => client.getDocument(id),
    compareHash: (id, hash) => client.compareHash(id, hash.toLowerCase()),
    importIpfs: async (request) => {
      // The same check as Electron main's IPC schema: a malformed CID never reaches the server.
      if (!isBareCid(request.cid)) {
        throw new ClientError({ kind: 'invalid-input', message: 'Not a bare CID (Qm… or b…)' });
      }
      return client.importIpfs(request);
    },
    gatewayLink: (id) => client.gatewayLink(id),
    captureWeb: async (request) => {
      // The same check as Electron main's IPC schema: a non-http(s) address never reaches the server.
      if (!isCaptureUrl(request.url)) {
        throw new ClientError({ kind: 'invalid-input', message: 'Not an http(s) URL without credentials' });
      }
      return client.captureWeb(request);
    },
    acceptInvitation: (invitationId) => client.acceptInvitation(invitationId),
    saveCertificate: async (id, language): Promise<SavedFile> => {
      const file = await client.certificate(id, language);
      downloadBytes(file.bytes, file.fileName, 'application/pdf');
      return { fileName: file.fileName, ...(file.signed ? { signed: file.signed } : {}) };
    },
    openCertificate: async (id, language): Promise<SavedFile> => {
      // Opened before the request: browsers only allow a new tab directly from the click.
      const tab = window.open('', '_blank');
      try {
        const file = await client.certificate(id, language);
        const url = URL.createObjectURL(
          new Blob([file.bytes as Uint8Array<ArrayBuffer>], { type: 'application/pdf' }),
        );
        if (tab) tab.location.href = url;
        else downloadBytes(file.bytes, file.fileName, 'application/pdf');
        setTimeout(() => URL.revokeObjectURL(url), 5 * 60_000);
        return { fileName: file.fileName, ...(file.signed ? { signed: file.signed } : {}) };
      } catch (e) {
        tab?.close();
        throw e;
      }
    },
    saveTimestamp: async (id): Promise<SavedFile> => {
      const file = await client.timestamp(id);
      downloadBytes(file.bytes, file.fileName, 'application/timestamp-reply');
      return { fileName: file.fileName };
    },
    openExternal: async (url) => {
      const u = new URL(url);
      if (u.protocol !== 'https:' && u.protocol !== 'http:') {
        throw new ClientError({ kind: 'forbidden', message: 'Only web links are opened' });
      }
      window.open(u.href, '_blank', 'noopener,noreferrer');
    },
  };
}

/** True for errors that mean "sign in again". */
export function needsSignIn(e: unknown): boolean {
  return isClientError(e) && (e.kind === 'session-expired' || e.kind === 'not-signed-in');
}
