/**
 * The one interface the renderer talks to. Two implementations:
 * - Electron (`renderer/bridge/electron.ts`): named preload methods -> IPC -> main, which does every HTTP
 *   call and keeps the tokens (they never reach the renderer);
 * - browser (`renderer/bridge/web.ts`): File API + WebCrypto/@noble/hashes, `fetch` to the page's own origin,
 *   the session in the server's HttpOnly cookie, downloads through blob links.
 *
 * Every method rejects with a `ClientError` (`common/errors.ts`). Type-only module: no runtime code.
 */
import type {
  AtaRequesterInput,
  DocumentDto,
  DocumentListDto,
  DocumentListQuery,
  HashComparisonDto,
  MeDto,
  MonitorDto,
  MonitorInput,
  MonitorListDto,
  NotaryPolicyName,
  NotarySignedCertificate,
  OnchainInfoDto,
  PublicDocumentDto,
  VerifyByHashDto,
} from '@notary/shared';
import type { ChainReport } from '@notary/verify/monitor-chain';
import type { CertificateCheck, ChainEndpoints, CheckOptions } from './certificate-check';

export type Language = 'pt' | 'en';

export interface AppSettings {
  /** Base URL of the notary service, e.g. `http://localhost:3000` (no trailing slash). */
  serverUrl: string;
  /** The UI language chosen by the user, or null to follow the system (Portuguese unless it prefers English). */
  language: Language | null;
  /** False in the browser: the web client always talks to the server that served it. */
  serverUrlEditable: boolean;
  /** The PKCS#11 module (driver) of the tabelião's A3 token, an absolute path; null until chosen, and in the browser. */
  tokenModulePath: string | null;
}

/** An organization the user belongs to (from the identity provider). */
export interface Organization {
  id: string;
  name: string;
  slug: string;
}

export interface SessionInfo {
  me: MeDto;
  organizations: Organization[];
}

/** Result of looking for a session at start. */
export type SessionState =
  | { state: 'signed-in'; session: SessionInfo }
  | {
      state: 'signed-out';
      /** A session existed and the server no longer accepts it (expired, revoked). */
      expired: boolean;
      /** Last e-mail used to sign in, to prefill the form (not a secret). */
      lastEmail: string | null;
    };

/** A local file the user picked or dropped. `id` names it in later calls; paths stay in main (Electron). */
export interface LocalFile {
  id: string;
  name: string;
  /** Bytes. */
  size: number;
}

/** Progress of a hashing or upload job, in bytes. */
export interface Progress {
  loaded: number;
  total: number;
}

export type ProgressListener = (progress: Progress) => void;

/** What a save produced; null from a save method means the user cancelled the dialog. */
export interface SavedFile {
  fileName: string;
  /** For certificates: whether the service signed it (`X-Service-Signed`). */
  signed?: 'pades' | 'none';
}

/** What `importIpfs` sends (spec, Documents: `POST /api/documents/import/ipfs`, tRPC `documents.importIpfs`). */
export interface IpfsImportRequest {
  /** A bare CID: v0 (`Qm…`) or v1 in base32 (`b…`), already checked with `common/cid.ts`. */
  cid: string;
  /** The name the record keeps; the server defaults it to the CID. */
  fileName?: string;
  /** The LGPD consent checkbox, ticked (a literal: the UI never calls without it). */
  consent: true;
}

/** Where an imported document's bytes live: its CID and the link the server gives on its public gateway. */
export interface GatewayLink {
  cid: string;
  /** `<IPFS_PUBLIC_GATEWAY>/ipfs/<cid>?filename=<name>` (the view URL of the document, spec Rule 3). */
  url: string;
}

/** What `captureWeb` sends (spec, Endpoints: `POST /api/documents/capture`, tRPC `documents.capture`). */
export interface WebCaptureRequest {
  /** An http(s) address without credentials, already checked with `common/capture-url.ts`. */
  url: string;
  /** The name the record keeps; the server defaults it to `<host>-<time>.wacz`. */
  fileName?: string;
  /** The LGPD consent checkbox, ticked (a literal: the UI never calls without it). */
  consent: true;
}

/** The ICP-Brasil signature policy the tabelião signs under: AD-RB, or AD-RT (with the service's timestamp). */
export type NotaryPolicy = NotaryPolicyName;

/** A certificate of the tabelião's token that may sign (desktop app only): what the screen lists and names back. */
export interface TokenCertificateInfo {
  /** The slot holding it and its CKA_ID, both hex: the certificate's name in `signWithToken`. */
  slot: string;
  id: string;
  label: string;
  subject: string;
  /** ISO 8601. */
  notAfter: string;
  /** How many certificates of its chain the token holds, itself included. */
  chainLength: number;
}

/** The signed certificate's record the service answers the completion (`PUT …/notary-signature/{sessionId}`). */
export type NotarySignedRecord = NotarySignedCertificate;

/** What signing a certificate with the token needs; `pin` (UTF-8 bytes) is zeroed once sent. */
export interface TokenSignRequest {
  documentId: string;
  certificate: Pick<TokenCertificateInfo, 'slot' | 'id'>;
  policy: NotaryPolicy;
  pin: Uint8Array;
  /** The language of the failure's sentence. */
  language: Language;
}

/** What signing a certificate with an A1 file needs (web client): the file and its password stay in the page. */
export interface Pkcs12SignRequest {
  documentId: string;
  file: File;
  password: string;
  policy: NotaryPolicy;
  language: Language;
}

export interface Bridge {
  readonly platform: 'electron' | 'web';

  getSettings(): Promise<AppSettings>;
  /** Electron only (the web client's server is its own origin). Clears the session when the server changes. */
  setServerUrl(url: string): Promise<AppSettings>;
  setLanguage(language: Language): Promise<void>;
  /** `GET /health` of the configured server; rejects with `offline` when it cannot be reached. */
  checkServer(): Promise<void>;

  /** Sends a 6-digit sign-in code to `email` (`POST /api/auth/email-otp/send-verification-otp`). */
  requestCode(email: string): Promise<void>;
  /** Signs in with the mailed code; the session renews itself afterwards. */
  signIn(email: string, code: string): Promise<SessionInfo>;
  currentSession(): Promise<SessionState>;
  /** Switches the active tenant: an organization id, or null for the personal workspace. */
  setTenant(orgId: string | null): Promise<SessionInfo>;
  signOut(): Promise<void>;
  /** Called when the session is refused while the app runs (renewal failed with 401). Returns an unsubscribe. */
  onSessionExpired(listener: () => void): () => void;

  /** Opens the system file picker (several files). Empty when cancelled. */
  pickFiles(): Promise<LocalFile[]>;
  /** Registers files dropped on the window. */
  dropFiles(files: File[]): Promise<LocalFile[]>;
  /** SHA-256 (64 lower-case hex) computed locally, streaming; `jobId` lets `cancel` stop it. */
  hashFile(fileId: string, jobId: string, onProgress: ProgressListener): Promise<string>;
  /** `POST /api/documents/upload` with `consent=true`, streaming, with progress; `cancel(jobId)` aborts. */
  upload(fileId: string, jobId: string, consent: true, onProgress: ProgressListener): Promise<DocumentDto>;
  cancel(jobId: string): Promise<void>;
  /**
   * `documents.importIpfs`: the server fetches the file from its IPFS gateways, verifies every block against
   * the CID and records it (no upload, no copy in storage). Rejects with `bad-request` (CID refused, e.g. a
   * directory's), `forbidden` (role below editor), `too-large` (over 250 MB), `rate-limited` (with the wait),
   * `bad-gateway` (gateway down, timed out, or content that does not match the CID).
   */
  importIpfs(request: IpfsImportRequest): Promise<DocumentDto>;
  /**
   * `documents.capture`: the server loads the page in an isolated browser, archives every exchange (WACZ)
   * and notarizes the archive; takes seconds. Rejects with `bad-request` (URL, scheme or destination
   * refused), `forbidden` (below editor), `rate-limited` (5 a minute or queue full), `bad-gateway` (502 site
   * unreachable, 504 capture timed out: see `status`), `unavailable` (503, no Chromium on the server).
   */
  captureWeb(request: WebCaptureRequest): Promise<DocumentDto>;

  publicVerify(hash: string): Promise<VerifyByHashDto>;
  /**
   * The six checks of `notary-verify` on a local file against a local certificate PDF: its SHA-256, the
   * Merkle proof of the certificate's `receipt.json`, the EAS attestation and the Stacks anchor, read from
   * `endpoints` (each asked; they must agree), never from the service; then, with no request, the receipt's
   * RFC 3161 token and the certificate's PAdES signature, chained to the anchors of `options.trust` (picked
   * PEM files are named by their ids). Runs in the page (web) or in main (Electron). Rejects with `too-large`
   * past 250 MB, `file` when a file cannot be read, `invalid-input` for an endpoint refused by
   * `endpointProblem` or a malformed date; an unreadable certificate (`no-receipt`) or anchor file
   * (`bad-anchor`) is a result, not an error.
   */
  checkCertificate(
    fileId: string,
    certificateId: string,
    endpoints: ChainEndpoints,
    options: CheckOptions,
  ): Promise<CertificateCheck>;
  /**
   * The run chain of a certidão de permanência (a PDF carrying `monitor-chain.json`), checked as
   * `notary-verify chain` does, in the page (web) or in main's bounded PDF worker (Electron); `chain` undefined
   * (with `unreadable`) for a PDF that carries none. Rejects with `too-large` past 266 MB, `file` when unreadable.
   */
  checkCertidaoChain(fileId: string): Promise<ChainReport>;
  publicDocument(serial: string): Promise<PublicDocumentDto>;
  onchainInfo(): Promise<OnchainInfoDto>;
  /**
   * One page of the active tenant's documents, newest first (`GET /api/documents`): at most `limit` (server
   * default 100), after `cursor` (the previous page's `nextCursor`), matching `q` when given (3 characters or
   * more: serial, hash and CID prefixes, any part of the file name).
   */
  listDocuments(request?: DocumentListQuery): Promise<DocumentListDto>;
  getDocument(id: string): Promise<DocumentDto>;
  compareHash(id: string, hash: string): Promise<HashComparisonDto>;
  /**
   * The CID and public gateway link of a document imported from IPFS (its view URL); rejects with
   * `bad-request` for a document of another source. In Electron the link may then be opened outside.
   */
  gatewayLink(id: string): Promise<GatewayLink>;
  /** The workspace's monitorings, newest first, without their runs (`monitors.list`). */
  listMonitors(): Promise<MonitorListDto>;
  /** One monitoring with its state and every run (`monitors.get`). */
  getMonitor(id: string): Promise<MonitorDto>;
  /**
   * Schedules a monitoring (`monitors.create`, `interval` and `period` as ISO 8601 durations). Rejects with
   * `bad-request` (the URL, or under the operator's minimum interval / over the maximum period: the message
   * says which), `forbidden` (below editor), `too-large` (storage quota full), `rate-limited`.
   */
  createMonitor(request: MonitorInput): Promise<MonitorDto>;
  /** Cancels a monitoring (`monitors.cancel`; editors and up); its runs stay. */
  cancelMonitor(id: string): Promise<MonitorDto>;
  /** Joins an organization from an invitation link (`#/join/<id>`); returns the organization id. */
  acceptInvitation(invitationId: string): Promise<string>;

  /** Certificate PDF (`?signed=1`: signed when the server has a signing certificate), saved where the user says. */
  saveCertificate(id: string, language: Language): Promise<SavedFile | null>;
  /**
   * Saves the ata notarial draft of web capture `id`: with `requester`, a new request (editors and up); with null,
   * the last one again. Null when the user cancelled the dialog.
   */
  saveAtaDraft(id: string, requester: AtaRequesterInput | null): Promise<SavedFile | null>;
  /**
   * Saves the certidão de permanência of monitoring `id`: the one issued after its last run, else one issued now
   * (editors and up; a reader gets `forbidden`). Null when the user cancelled the dialog.
   */
  saveCertidao(id: string): Promise<SavedFile | null>;
  /** Opens the certificate in the system's PDF viewer (browser: a new tab). */
  openCertificate(id: string, language: Language): Promise<SavedFile>;
  /** RFC 3161 timestamp token (`.tsr`) of the document's hash, saved where the user says. */
  saveTimestamp(id: string): Promise<SavedFile | null>;
  /** Opens an http(s) link in the system browser (only links the app allows: explorers, the server). */
  openExternal(url: string): Promise<void>;

  /**
   * Electron only: the token's PKCS#11 module path (absolute), or null to forget it. Rejects with
   * `invalid-input` for a path refused by main's schema.
   */
  setTokenModule(path: string | null): Promise<AppSettings>;
  /**
   * Electron only: the certificates of the tokens present that may sign (no PIN asked). Rejects with `signing`
   * (the sentence in `language`: no module chosen or loadable, no token).
   */
  tokenCertificates(language: Language): Promise<TokenCertificateInfo[]>;
  /**
   * Electron only: the tabelião's signature of document `documentId`'s certificate on the token (deferred
   * signing: prepare, sign in main, complete). The PIN goes only to main and is zeroed here once sent. Rejects
   * with `signing` (wrong PIN with tries left, PIN locked, token removed, no signing key, certificate expired:
   * a sentence in `language`) or the service's refusal.
   */
  signWithToken(request: TokenSignRequest): Promise<NotarySignedRecord>;
  /**
   * Web client only: the same with an A1 `.pfx`/`.p12` opened in the page (pkijs, WebCrypto): the key is
   * imported non-extractable and signs in the page; only the chain and the signature value are sent. Rejects
   * with `signing` (wrong password, unreadable or legacy-encrypted file, no key, certificate expired).
   */
  signWithPkcs12(request: Pkcs12SignRequest): Promise<NotarySignedRecord>;
}
