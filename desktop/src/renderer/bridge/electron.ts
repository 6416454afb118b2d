import type { Bridge, ProgressListener } from '../../common/bridge';
import { ClientError, clientErrorFrom } from '../../common/errors';
import type { IpcResult, PreloadApi } from '../../common/ipc';

async function unwrap<T>(result: Promise<IpcResult<T>>): Promise<T> {
  const r = await result;
  if (r.ok) return r.value;
  throw clientErrorFrom(r.error);
}

/**
 * The bridge inside Electron: every method is one named preload call (`window.notary`), answered by main.
 * Progress arrives as events filtered by job id.
 */
export function electronBridge(api: PreloadApi): Bridge {
  const withProgress = async <T>(
    jobId: string,
    onProgress: ProgressListener,
    run: () => Promise<IpcResult<T>>,
  ) => {
    const off = api.onProgress((e) => {
      if (e.jobId === jobId) onProgress({ loaded: e.loaded, total: e.total });
    });
    try {
      return await unwrap(run());
    } finally {
      off();
    }
  };
  return {
    platform: 'electron',
    getSettings: () => unwrap(api.settingsGet()),
    setServerUrl: (url) => unwrap(api.settingsSetServerUrl({ url })),
    setLanguage: async (language) => {
      await unwrap(api.settingsSetLanguage({ language }));
    },
    checkServer: async () => {
      await unwrap(api.serverCheck());
    },
    requestCode: async (email) => {
      await unwrap(api.authRequestCode({ email }));
    },
    signIn: (email, code) => unwrap(api.authSignIn({ email, code })),
    currentSession: () => unwrap(api.authSession()),
    setTenant: (orgId) => unwrap(api.authSetTenant({ orgId })),
    signOut: async () => {
      await unwrap(api.authSignOut());
    },
    onSessionExpired: (listener) => api.onSessionExpired(listener),
    pickFiles: () => unwrap(api.filesPick()),
    dropFiles: (files) => unwrap(api.dropFiles(files)),
    hashFile: (fileId, jobId, onProgress) =>
      withProgress(jobId, onProgress, () => api.filesHash({ fileId, jobId })),
    upload: (fileId, jobId, consent, onProgress) =>
      withProgress(jobId, onProgress, () => api.filesUpload({ fileId, jobId, consent })),
    cancel: async (jobId) => {
      await unwrap(api.jobsCancel({ jobId }));
    },
    publicVerify: (hash) => unwrap(api.publicVerify({ hash })),
    checkCertidaoChain: (fileId) => unwrap(api.publicCheckChain({ fileId })),
    checkCertificate: (fileId, certificateId, endpoints, options) =>
      unwrap(api.publicCheckCertificate({ fileId, certificateId, endpoints, ...options })),
    publicDocument: (serial) => unwrap(api.publicDocument({ serial })),
    onchainInfo: () => unwrap(api.onchainInfo()),
    listDocuments: (request) => unwrap(api.documentsList(request)),
    getDocument: (id) => unwrap(api.documentsGet({ id })),
    compareHash: (id, hash) => unwrap(api.documentsCompare({ id, hash })),
    importIpfs: (request) => unwrap(api.documentsImportIpfs(request)),
    gatewayLink: (id) => unwrap(api.documentsGatewayLink({ id })),
    captureWeb: (request) => unwrap(api.documentsCaptureWeb(request)),
    acceptInvitation: (invitationId) => unwrap(api.teamAcceptInvitation({ invitationId })),
    listMonitors: () => unwrap(api.monitorsList()),
    getMonitor: (id) => unwrap(api.monitorsGet({ id })),
    createMonitor: (request) => unwrap(api.monitorsCreate(request)),
    cancelMonitor: (id) => unwrap(api.monitorsCancel({ id })),
    saveCertidao: (id) => unwrap(api.certidaoSave({ id })),
    saveCertificate: (id, language) => unwrap(api.certificateSave({ id, language })),
    saveAtaDraft: (id, requester) => unwrap(api.ataSave({ id, ...(requester ? { requester } : {}) })),
    openCertificate: (id, language) => unwrap(api.certificateOpen({ id, language })),
    saveTimestamp: (id) => unwrap(api.timestampSave({ id })),
    openExternal: async (url) => {
      await unwrap(api.openExternal({ url }));
    },
    setTokenModule: (path) => unwrap(api.settingsSetTokenModule({ path })),
    tokenCertificates: (language) => unwrap(api.tokenCertificates({ language })),
    signWithToken: async ({ documentId, certificate, policy, pin, language }) => {
      const sent = api.tokenSign({
        documentId,
        slot: certificate.slot,
        id: certificate.id,
        policy,
        pin,
        language,
      });
      // IPC has copied the bytes into main's message: this side's copy is no longer needed.
      pin.fill(0);
      return unwrap(sent);
    },
    signWithPkcs12: async () => {
      throw new ClientError({
        kind: 'invalid-input',
        message: 'An A1 file is signed in the web client; the desktop app signs with the token',
      });
    },
  };
}
