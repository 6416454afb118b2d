/**
 * Preload (sandboxed, context-isolated): exposes `window.notary`, one named method per IPC channel and two
 * event subscriptions. No generic `send`/`invoke`, no Node or Electron object reaches the page. Payloads are
 * passed on as given; main validates them (`main/ipc-schemas.ts`).
 * Bundled to `dist/preload/index.cjs` (a sandboxed preload can only `require('electron')`).
 */
import { contextBridge, type IpcRendererEvent, ipcRenderer, webUtils } from 'electron';
import { CHANNELS, EVENTS, type PreloadApi, type ProgressEvent } from '../common/ipc';

const invoke =
  (channel: string) =>
  (input?: unknown): Promise<never> =>
    // The answer's type is the channel's (`IpcContract`); main builds it, the renderer unwraps it.
    (input === undefined
      ? ipcRenderer.invoke(channel)
      : ipcRenderer.invoke(channel, input)) as Promise<never>;

const api: PreloadApi = {
  settingsGet: invoke(CHANNELS.settingsGet),
  settingsSetServerUrl: invoke(CHANNELS.settingsSetServerUrl),
  settingsSetLanguage: invoke(CHANNELS.settingsSetLanguage),
  settingsSetTokenModule: invoke(CHANNELS.settingsSetTokenModule),
  serverCheck: invoke(CHANNELS.serverCheck),
  authRequestCode: invoke(CHANNELS.authRequestCode),
  authSignIn: invoke(CHANNELS.authSignIn),
  authSession: invoke(CHANNELS.authSession),
  authSetTenant: invoke(CHANNELS.authSetTenant),
  authSignOut: invoke(CHANNELS.authSignOut),
  filesPick: invoke(CHANNELS.filesPick),
  filesHash: invoke(CHANNELS.filesHash),
  filesUpload: invoke(CHANNELS.filesUpload),
  jobsCancel: invoke(CHANNELS.jobsCancel),
  publicVerify: invoke(CHANNELS.publicVerify),
  publicCheckCertificate: invoke(CHANNELS.publicCheckCertificate),
  publicCheckChain: invoke(CHANNELS.publicCheckChain),
  publicDocument: invoke(CHANNELS.publicDocument),
  onchainInfo: invoke(CHANNELS.onchainInfo),
  documentsList: invoke(CHANNELS.documentsList),
  documentsGet: invoke(CHANNELS.documentsGet),
  documentsCompare: invoke(CHANNELS.documentsCompare),
  documentsImportIpfs: invoke(CHANNELS.documentsImportIpfs),
  documentsGatewayLink: invoke(CHANNELS.documentsGatewayLink),
  documentsCaptureWeb: invoke(CHANNELS.documentsCaptureWeb),
  teamAcceptInvitation: invoke(CHANNELS.teamAcceptInvitation),
  certificateSave: invoke(CHANNELS.certificateSave),
  certificateOpen: invoke(CHANNELS.certificateOpen),
  timestampSave: invoke(CHANNELS.timestampSave),
  ataSave: invoke(CHANNELS.ataSave),
  monitorsList: invoke(CHANNELS.monitorsList),
  monitorsGet: invoke(CHANNELS.monitorsGet),
  monitorsCreate: invoke(CHANNELS.monitorsCreate),
  monitorsCancel: invoke(CHANNELS.monitorsCancel),
  certidaoSave: invoke(CHANNELS.certidaoSave),
  openExternal: invoke(CHANNELS.openExternal),
  tokenCertificates: invoke(CHANNELS.tokenCertificates),
  tokenSign: invoke(CHANNELS.tokenSign),
  dropFiles: (files: File[]) => {
    // A File built by script has no path (''): only files the user really dropped get through.
    const paths = Array.from(files, (f) => webUtils.getPathForFile(f)).filter((p) => p.length > 0);
    if (paths.length === 0) {
      return Promise.resolve({ ok: false, error: { kind: 'file', message: 'No local file in the drop' } });
    }
    return ipcRenderer.invoke(CHANNELS.filesDropped, { paths });
  },
  onProgress: (listener) => {
    const wrapped = (_event: IpcRendererEvent, progress: ProgressEvent) => listener(progress);
    ipcRenderer.on(EVENTS.progress, wrapped);
    return () => {
      ipcRenderer.removeListener(EVENTS.progress, wrapped);
    };
  },
  onSessionExpired: (listener) => {
    const wrapped = () => listener();
    ipcRenderer.on(EVENTS.sessionExpired, wrapped);
    return () => {
      ipcRenderer.removeListener(EVENTS.sessionExpired, wrapped);
    };
  },
};

contextBridge.exposeInMainWorld('notary', api);
