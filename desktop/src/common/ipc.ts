/**
 * The IPC contract between the preload (renderer side) and main: channel names, payload and result types,
 * and the API the preload exposes as `window.notary`. Named channels only: there is no generic
 * send/invoke, and main validates every payload with zod (`main/ipc-schemas.ts`) before acting on it.
 *
 * Results travel as `IpcResult` envelopes because Electron reduces a rejected `invoke` to a bare message;
 * the envelope keeps the error's kind and status for the renderer.
 *
 * No runtime imports besides constants: the sandboxed preload bundles this file.
 */
import type {
  AtaRequesterInput,
  DocumentDto,
  DocumentListDto,
  DocumentListQuery,
  HashComparisonDto,
  MonitorDto,
  MonitorInput,
  MonitorListDto,
  OnchainInfoDto,
  PublicDocumentDto,
  VerifyByHashDto,
} from '@notary/shared';
import type { ChainReport } from '@notary/verify/monitor-chain';
import type {
  AppSettings,
  GatewayLink,
  IpfsImportRequest,
  Language,
  LocalFile,
  NotaryPolicy,
  NotarySignedRecord,
  SavedFile,
  SessionInfo,
  SessionState,
  TokenCertificateInfo,
  WebCaptureRequest,
} from './bridge';
import type { CertificateCheck, ChainEndpoints, CheckOptions } from './certificate-check';
import type { ClientErrorData } from './errors';

/** Invoke channels (renderer -> main, with an answer). */
export const CHANNELS = {
  settingsGet: 'settings:get',
  settingsSetServerUrl: 'settings:set-server-url',
  settingsSetLanguage: 'settings:set-language',
  settingsSetTokenModule: 'settings:set-token-module',
  serverCheck: 'server:check',
  authRequestCode: 'auth:request-code',
  authSignIn: 'auth:sign-in',
  authSession: 'auth:session',
  authSetTenant: 'auth:set-tenant',
  authSignOut: 'auth:sign-out',
  filesPick: 'files:pick',
  filesDropped: 'files:dropped',
  filesHash: 'files:hash',
  filesUpload: 'files:upload',
  jobsCancel: 'jobs:cancel',
  publicVerify: 'public:verify',
  publicCheckCertificate: 'public:check-certificate',
  publicCheckChain: 'public:check-chain',
  publicDocument: 'public:document',
  onchainInfo: 'public:onchain-info',
  documentsList: 'documents:list',
  documentsGet: 'documents:get',
  documentsCompare: 'documents:compare',
  documentsImportIpfs: 'documents:import-ipfs',
  documentsGatewayLink: 'documents:gateway-link',
  documentsCaptureWeb: 'documents:capture-web',
  teamAcceptInvitation: 'team:accept-invitation',
  certificateSave: 'certificate:save',
  certificateOpen: 'certificate:open',
  timestampSave: 'timestamp:save',
  ataSave: 'ata:save',
  monitorsList: 'monitors:list',
  monitorsGet: 'monitors:get',
  monitorsCreate: 'monitors:create',
  monitorsCancel: 'monitors:cancel',
  certidaoSave: 'certidao:save',
  openExternal: 'shell:open-external',
  tokenCertificates: 'token:certificates',
  tokenSign: 'token:sign',
} as const;
export type Channel = (typeof CHANNELS)[keyof typeof CHANNELS];

/** Event channels (main -> renderer). */
export const EVENTS = {
  progress: 'job:progress',
  sessionExpired: 'session:expired',
} as const;

export type IpcResult<T> = { ok: true; value: T } | { ok: false; error: ClientErrorData };

export interface ProgressEvent {
  jobId: string;
  loaded: number;
  total: number;
}

/** Payload (one object, or nothing) and answer of every invoke channel. */
export interface IpcContract {
  'settings:get': { input: undefined; output: AppSettings };
  'settings:set-server-url': { input: { url: string }; output: AppSettings };
  'settings:set-language': { input: { language: Language }; output: null };
  'server:check': { input: undefined; output: null };
  'auth:request-code': { input: { email: string }; output: null };
  'auth:sign-in': { input: { email: string; code: string }; output: SessionInfo };
  'auth:session': { input: undefined; output: SessionState };
  'auth:set-tenant': { input: { orgId: string | null }; output: SessionInfo };
  'auth:sign-out': { input: undefined; output: null };
  'files:pick': { input: undefined; output: LocalFile[] };
  'files:dropped': { input: { paths: string[] }; output: LocalFile[] };
  'files:hash': { input: { fileId: string; jobId: string }; output: string };
  'files:upload': { input: { fileId: string; jobId: string; consent: true }; output: DocumentDto };
  'jobs:cancel': { input: { jobId: string }; output: null };
  'public:verify': { input: { hash: string }; output: VerifyByHashDto };
  'public:check-certificate': {
    input: { fileId: string; certificateId: string; endpoints: ChainEndpoints } & CheckOptions;
    output: CertificateCheck;
  };
  'public:check-chain': { input: { fileId: string }; output: ChainReport };
  'public:document': { input: { serial: string }; output: PublicDocumentDto };
  'public:onchain-info': { input: undefined; output: OnchainInfoDto };
  'documents:list': { input: DocumentListQuery | undefined; output: DocumentListDto };
  'documents:get': { input: { id: string }; output: DocumentDto };
  'documents:compare': { input: { id: string; hash: string }; output: HashComparisonDto };
  'documents:import-ipfs': { input: IpfsImportRequest; output: DocumentDto };
  'documents:gateway-link': { input: { id: string }; output: GatewayLink };
  'documents:capture-web': { input: WebCaptureRequest; output: DocumentDto };
  'team:accept-invitation': { input: { invitationId: string }; output: string };
  'certificate:save': { input: { id: string; language: Language }; output: SavedFile | null };
  'certificate:open': { input: { id: string; language: Language }; output: SavedFile };
  'timestamp:save': { input: { id: string }; output: SavedFile | null };
  'ata:save': { input: { id: string; requester?: AtaRequesterInput }; output: SavedFile | null };
  'monitors:list': { input: undefined; output: MonitorListDto };
  'monitors:get': { input: { id: string }; output: MonitorDto };
  'monitors:create': { input: MonitorInput; output: MonitorDto };
  'monitors:cancel': { input: { id: string }; output: MonitorDto };
  'certidao:save': { input: { id: string }; output: SavedFile | null };
  'shell:open-external': { input: { url: string }; output: null };
  'settings:set-token-module': { input: { path: string | null }; output: AppSettings };
  'token:certificates': { input: { language: Language }; output: TokenCertificateInfo[] };
  /** The PIN travels as bytes, so that both sides can zero their copy once used. */
  'token:sign': {
    input: {
      documentId: string;
      slot: string;
      id: string;
      policy: NotaryPolicy;
      pin: Uint8Array;
      language: Language;
    };
    output: NotarySignedRecord;
  };
}

type Invoke<C extends Channel> = IpcContract[C]['input'] extends undefined
  ? () => Promise<IpcResult<IpcContract[C]['output']>>
  : (input: IpcContract[C]['input']) => Promise<IpcResult<IpcContract[C]['output']>>;

/** `window.notary`, as exposed by the preload through `contextBridge.exposeInMainWorld`. */
export type PreloadApi = {
  [K in Exclude<keyof typeof CHANNELS, 'filesDropped'>]: Invoke<(typeof CHANNELS)[K]>;
} & {
  /**
   * Files dropped on the window: the preload resolves their paths with `webUtils.getPathForFile` and
   * registers them in main. The page itself cannot name a path: a `File` made by script has none, so only
   * files the user really dropped (or picked in the system dialog) can ever be read.
   */
  dropFiles(files: File[]): Promise<IpcResult<LocalFile[]>>;
  onProgress(listener: (event: ProgressEvent) => void): () => void;
  onSessionExpired(listener: () => void): () => void;
};
