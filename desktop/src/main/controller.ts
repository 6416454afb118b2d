import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DocumentSchema, type OnchainInfoDto } from '@notary/shared';
import { type BrowserWindow, dialog, shell } from 'electron';
import type {
  AppSettings,
  Language,
  NotarySignedRecord,
  SavedFile,
  SessionState,
  TokenCertificateInfo,
} from '../common/bridge';
import { type BinaryFile, NotaryClient } from '../common/client';
import { ClientError, isClientError } from '../common/errors';
import { EVENTS, type IpcContract, type ProgressEvent } from '../common/ipc';
import { CertificateChecker } from './certificate-check';
import { FileRegistry } from './files';
import { hashFile } from './hash';
import type { IpcHandlers } from './ipc';
import { isExternalAllowed } from './navigation';
import { normalizeServerUrl, SettingsStore, type StoredSettings } from './settings';
import type { Pkcs11Factory, TokenCertificate } from './token-signing';
import { EncryptedTokenStore } from './token-store';
import { uploadFile } from './upload';

export interface ControllerOptions {
  /** Electron's `app.getPath('userData')`: settings and the encrypted session live there. */
  userDataDir: string;
  /** Where certificates opened in the system viewer are written (`app.getPath('temp')`). */
  tempDir: string;
  /** Default folder of save dialogs (`app.getPath('documents')`). */
  documentsDir: string;
  /** The app window (parent of dialogs, target of events); null while none is open. */
  window: () => BrowserWindow | null;
  /**
   * Entry of the worker that parses certificate PDFs (`certificate-worker`): the bundled app passes
   * `certificate-worker.cjs` beside `index.cjs`; default the TypeScript source beside this module.
   */
  certificateWorker?: URL;
  /** The PKCS#11 binding the token's module is loaded into (tests: a stand-in session); default `pkcs11js`. */
  pkcs11?: Pkcs11Factory;
}

/** What the renderer learns of the settings. */
function appSettings(s: StoredSettings): AppSettings {
  return {
    serverUrl: s.serverUrl,
    language: s.language,
    serverUrlEditable: true,
    tokenModulePath: s.tokenModulePath,
  };
}

/**
 * The token's module, loaded on first use only: `pkcs11js` is a native addon outside the bundle and an
 * optional dependency, so an app without it starts, and only the token's screen says why it cannot sign.
 */
const tokenSigning = () => import('./token-signing');
type TokenSigning = Awaited<ReturnType<typeof tokenSigning>>;

/**
 * A name safe to write under a folder we choose: the last path segment, no control characters or
 * separators, no leading dots, at most 150 characters. The server's `Content-Disposition` is not trusted.
 */
export function safeFileName(name: string, fallback: string): string {
  const last = name.split(/[\\/]/).pop() ?? '';
  const cleaned = last
    // biome-ignore lint/suspicious/noControlCharactersInRegex: removing control characters is the point.
    .replace(/[\u0000-\u001f\u007f<>:"|?*]/g, '_')
    .replace(/^\.+/, '')
    .trim();
  return [...cleaned].slice(0, 150).join('') || fallback;
}

/**
 * Everything main does for the renderer, one method per IPC channel (`common/ipc.ts`): settings, the
 * session (tokens stay here, encrypted at rest), local files (hashing, upload), API calls through the typed
 * tRPC client, certificate and timestamp files, external links. Payloads arrive validated (`ipc.ts`).
 */
export class MainController {
  private readonly settings: SettingsStore;
  private readonly tokens: EncryptedTokenStore;
  private readonly files = new FileRegistry();
  private readonly jobs = new Map<string, AbortController>();
  private clientValue: NotaryClient | null = null;
  private explorerPrefixes: string[] = [];
  /** Gateway links of imported documents the server gave (`gatewayLink`): they may be opened outside. */
  private gatewayLinks: string[] = [];
  private serverUrl = '';
  private checker: CertificateChecker | undefined;
  /** The token's certificates last listed, by `slot:id`: signing names one, main keeps its chain. */
  private tokenListed = new Map<string, TokenCertificate>();

  constructor(private readonly options: ControllerOptions) {
    this.settings = new SettingsStore(path.join(options.userDataDir, 'settings.json'));
    this.tokens = new EncryptedTokenStore(path.join(options.userDataDir, 'session.bin'));
  }

  /** The HTTP client of the configured server (rebuilt when the server changes). */
  async client(): Promise<NotaryClient> {
    const { serverUrl } = await this.settings.get();
    if (!this.clientValue || this.serverUrl !== serverUrl) {
      this.clientValue?.close();
      this.serverUrl = serverUrl;
      this.explorerPrefixes = [];
      this.gatewayLinks = [];
      this.clientValue = new NotaryClient({
        baseUrl: serverUrl,
        mode: 'bearer',
        store: this.tokens.forOrigin(new URL(serverUrl).origin),
        onSessionExpired: () => this.options.window()?.webContents.send(EVENTS.sessionExpired),
      });
    }
    return this.clientValue;
  }

  /** Links the window may open in the system browser (navigation.ts). */
  externalContext() {
    return { serverUrl: this.serverUrl, prefixes: [...this.explorerPrefixes, ...this.gatewayLinks] };
  }

  /** Stops timers and running jobs (app quitting). */
  close(): void {
    for (const job of this.jobs.values()) job.abort();
    this.clientValue?.close();
    void this.checker?.close();
  }

  /** The certificate checker, its worker pool started on first use. */
  private certificateChecker(): CertificateChecker {
    this.checker ??= new CertificateChecker(
      this.options.certificateWorker ?? new URL('./certificate-worker.ts', import.meta.url),
    );
    return this.checker;
  }

  private progress(jobId: string) {
    return (loaded: number, total: number) => {
      const event: ProgressEvent = { jobId, loaded, total };
      this.options.window()?.webContents.send(EVENTS.progress, event);
    };
  }

  private async runJob<T>(jobId: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    if (this.jobs.has(jobId))
      throw new ClientError({ kind: 'invalid-input', message: 'Job id already in use' });
    const controller = new AbortController();
    this.jobs.set(jobId, controller);
    try {
      return await fn(controller.signal);
    } finally {
      this.jobs.delete(jobId);
    }
  }

  private rememberPrefixes(info: OnchainInfoDto): OnchainInfoDto {
    this.explorerPrefixes = [
      info.explorerTxPrefix,
      info.attestationScanPrefix,
      info.stacksExplorerTxPrefix,
    ].filter((p) => p.length > 0);
    return info;
  }

  /** Allows the link of an imported document outside (exact URL; the last 100 only, newest kept). */
  private rememberGatewayLink(url: string): void {
    this.gatewayLinks = [url, ...this.gatewayLinks.filter((u) => u !== url)].slice(0, 100);
  }

  private async saveWithDialog(
    file: BinaryFile,
    filter: { name: string; extensions: string[] },
  ): Promise<SavedFile | null> {
    const name = safeFileName(file.fileName, `notary.${filter.extensions[0] ?? 'bin'}`);
    const options = { defaultPath: path.join(this.options.documentsDir, name), filters: [filter] };
    const win = this.options.window();
    const choice = win ? await dialog.showSaveDialog(win, options) : await dialog.showSaveDialog(options);
    if (choice.canceled || !choice.filePath) return null;
    await writeFile(choice.filePath, file.bytes);
    return { fileName: path.basename(choice.filePath), ...(file.signed ? { signed: file.signed } : {}) };
  }

  /** The chosen module path; a `signing` error in `language` when none was chosen. */
  private async tokenModulePath(signing: TokenSigning): Promise<string> {
    const { tokenModulePath } = await this.settings.get();
    if (tokenModulePath) return tokenModulePath;
    throw new signing.TokenError('module', 'no module path in the settings');
  }

  /** `token:certificates`: lists and remembers the token's certificates that may sign. */
  private async listTokenCertificates(language: Language): Promise<TokenCertificateInfo[]> {
    return this.withTokenSigning(language, async (signing) => {
      const modulePath = await this.tokenModulePath(signing);
      const listed = signing.listSigningCertificates(modulePath, this.options.pkcs11);
      this.tokenListed = new Map(listed.map((c) => [`${c.slot}:${c.id}`, c]));
      return listed.map(({ slot, id, label, subject, notAfter, chain }) => ({
        slot,
        id,
        label,
        subject,
        notAfter,
        chainLength: chain.length,
      }));
    });
  }

  /**
   * `token:sign`: the certificate (one listed before) is checked current, the service prepares the session with
   * its chain, the token signs the attributes, the service completes. The PIN is zeroed whatever happens.
   */
  private async signWithToken(request: IpcContract['token:sign']['input']): Promise<NotarySignedRecord> {
    const { pin, language } = request;
    try {
      return await this.withTokenSigning(language, async (signing) => {
        const modulePath = await this.tokenModulePath(signing);
        const certificate = this.tokenListed.get(`${request.slot}:${request.id}`);
        if (!certificate) {
          throw new signing.TokenError('token-removed', 'the certificate is not among those last listed');
        }
        // Before anything is sent: the service would refuse an expired certificate only after the round trip.
        signing.assertCurrent(certificate);
        const client = await this.client();
        const prepared = await client.prepareNotarySignature({
          id: request.documentId,
          certificates: certificate.chain.map((der) => Buffer.from(der).toString('base64')),
          policy: request.policy,
          lang: language,
        });
        const signature = signing.signOnToken({
          modulePath,
          certificate,
          pin,
          data: new Uint8Array(Buffer.from(prepared.signedAttributes, 'base64')),
          ...(this.options.pkcs11 ? { pkcs11: this.options.pkcs11 } : {}),
        });
        return client.completeNotarySignature({
          id: request.documentId,
          sessionId: prepared.sessionId,
          signature: Buffer.from(signature).toString('base64'),
        });
      });
    } finally {
      pin.fill(0);
    }
  }

  /**
   * Runs `work` with the token's module loaded; a token's failure becomes a `signing` error carrying its
   * sentence in `language`, and so does an app installed without the native addon.
   */
  private async withTokenSigning<T>(
    language: Language,
    work: (signing: TokenSigning) => Promise<T>,
  ): Promise<T> {
    let signing: TokenSigning;
    try {
      signing = await tokenSigning();
    } catch (e) {
      throw new ClientError(
        {
          kind: 'signing',
          message:
            language === 'pt'
              ? 'Esta instalação não tem o suporte a tokens PKCS#11 (pkcs11js): reinstale o aplicativo.'
              : 'This installation lacks PKCS#11 token support (pkcs11js): reinstall the app.',
        },
        { cause: e },
      );
    }
    try {
      return await work(signing);
    } catch (e) {
      if (e instanceof signing.TokenError) {
        throw new ClientError(
          { kind: 'signing', message: signing.tokenErrorSentence(e, language) },
          { cause: e },
        );
      }
      throw e;
    }
  }

  /** The IPC handlers (`registerIpcHandlers`). */
  handlers(): IpcHandlers {
    return {
      'settings:get': async () => appSettings(await this.settings.get()),
      'settings:set-server-url': async ({ url }) => {
        // Refused with a sentence saying why (ClientError invalid-input / insecure-url).
        const serverUrl = normalizeServerUrl(url);
        const previous = await this.settings.get();
        if (new URL(previous.serverUrl).origin !== new URL(serverUrl).origin) {
          // A session belongs to the server that issued it.
          this.clientValue?.close();
          await this.tokens.save(new URL(previous.serverUrl).origin, null);
        }
        return appSettings(await this.settings.update({ serverUrl }));
      },
      'settings:set-token-module': async ({ path: modulePath }) => {
        this.tokenListed.clear();
        return appSettings(await this.settings.update({ tokenModulePath: modulePath }));
      },
      'token:certificates': async ({ language }) => this.listTokenCertificates(language),
      'token:sign': async (request) => this.signWithToken(request),
      'settings:set-language': async ({ language }) => {
        await this.settings.update({ language });
        return null;
      },
      'server:check': async () => {
        await (await this.client()).health();
        return null;
      },
      'auth:request-code': async ({ email }) => {
        await (await this.client()).requestCode(email);
        await this.settings.update({ lastEmail: email });
        return null;
      },
      'auth:sign-in': async ({ email, code }) => (await this.client()).signIn(email, code),
      'auth:session': async (): Promise<SessionState> => {
        const { lastEmail } = await this.settings.get();
        try {
          const session = await (await this.client()).session();
          return session
            ? { state: 'signed-in', session }
            : { state: 'signed-out', expired: false, lastEmail };
        } catch (e) {
          if (isClientError(e) && e.kind === 'session-expired')
            return { state: 'signed-out', expired: true, lastEmail };
          throw e;
        }
      },
      'auth:set-tenant': async ({ orgId }) => (await this.client()).setTenant(orgId),
      'auth:sign-out': async () => {
        await (await this.client()).signOut();
        return null;
      },
      'files:pick': async () => {
        const win = this.options.window();
        const options = { properties: ['openFile', 'multiSelections'] as ('openFile' | 'multiSelections')[] };
        const choice = win ? await dialog.showOpenDialog(win, options) : await dialog.showOpenDialog(options);
        if (choice.canceled) return [];
        return Promise.all(choice.filePaths.map((p) => this.files.register(p)));
      },
      'files:dropped': async ({ paths }) => Promise.all(paths.map((p) => this.files.register(p))),
      'files:hash': async ({ fileId, jobId }) => {
        const file = this.files.get(fileId);
        return this.runJob(jobId, (signal) =>
          hashFile(file.path, { onProgress: this.progress(jobId), signal }),
        );
      },
      'files:upload': async ({ fileId, jobId }) => {
        const file = this.files.get(fileId);
        const client = await this.client();
        const body = await this.runJob(jobId, (signal) =>
          client.authorized((jwt) =>
            uploadFile({
              url: client.uploadUrl(),
              jwt,
              filePath: file.path,
              fileName: file.name,
              onProgress: this.progress(jobId),
              signal,
            }),
          ),
        );
        const doc = DocumentSchema.safeParse(body);
        if (!doc.success)
          throw new ClientError({ kind: 'server', message: 'Unexpected answer to the upload' });
        return doc.data;
      },
      'jobs:cancel': async ({ jobId }) => {
        this.jobs.get(jobId)?.abort();
        return null;
      },
      'public:verify': async ({ hash }) => (await this.client()).publicVerify(hash.toLowerCase()),
      'public:check-certificate': async ({ fileId, certificateId, endpoints, trust, at }) => {
        const file = this.files.get(fileId);
        const certificate = this.files.get(certificateId);
        // Here in main, as every request (the renderer's CSP allows it none); the PDF only in a bounded worker.
        return this.certificateChecker().check(file.path, certificate.path, endpoints, { trust, at }, (id) =>
          this.files.get(id),
        );
      },
      'public:check-chain': async ({ fileId }) =>
        this.certificateChecker().checkChain(this.files.get(fileId).path),
      'public:document': async ({ serial }) => (await this.client()).publicDocument(serial.trim()),
      'public:onchain-info': async () => this.rememberPrefixes(await (await this.client()).onchainInfo()),
      'documents:list': async (request) => (await this.client()).listDocuments(request),
      'documents:get': async ({ id }) => (await this.client()).getDocument(id),
      'documents:compare': async ({ id, hash }) => (await this.client()).compareHash(id, hash.toLowerCase()),
      'documents:import-ipfs': async (request) => (await this.client()).importIpfs(request),
      'documents:capture-web': async (request) => (await this.client()).captureWeb(request),
      'documents:gateway-link': async ({ id }) => {
        const link = await (await this.client()).gatewayLink(id);
        this.rememberGatewayLink(link.url);
        return link;
      },
      'team:accept-invitation': async ({ invitationId }) =>
        (await this.client()).acceptInvitation(invitationId),
      'certificate:save': async ({ id, language }) =>
        this.saveWithDialog(await (await this.client()).certificate(id, language), {
          name: 'PDF',
          extensions: ['pdf'],
        }),
      'certificate:open': async ({ id, language }) => {
        const file = await (await this.client()).certificate(id, language);
        const dir = path.join(this.options.tempDir, 'notary-certificates');
        await mkdir(dir, { recursive: true, mode: 0o700 });
        const target = path.join(dir, safeFileName(file.fileName, 'certificate.pdf'));
        await writeFile(target, file.bytes, { mode: 0o600 });
        const error = await shell.openPath(target);
        if (error)
          throw new ClientError({ kind: 'file', message: `Could not open the certificate: ${error}` });
        return { fileName: path.basename(target), ...(file.signed ? { signed: file.signed } : {}) };
      },
      'ata:save': async ({ id, requester }) =>
        this.saveWithDialog(await (await this.client()).ataDraft(id, requester), {
          name: 'PDF',
          extensions: ['pdf'],
        }),
      'monitors:list': async () => (await this.client()).listMonitors(),
      'monitors:get': async ({ id }) => (await this.client()).getMonitor(id),
      'monitors:create': async (request) => (await this.client()).createMonitor(request),
      'monitors:cancel': async ({ id }) => (await this.client()).cancelMonitor(id),
      'certidao:save': async ({ id }) =>
        this.saveWithDialog(await (await this.client()).certidao(id), { name: 'PDF', extensions: ['pdf'] }),
      'timestamp:save': async ({ id }) =>
        this.saveWithDialog(await (await this.client()).timestamp(id), {
          name: 'RFC 3161 timestamp',
          extensions: ['tsr'],
        }),
      'shell:open-external': async ({ url }) => {
        await this.client();
        if (!isExternalAllowed(url, this.externalContext())) {
          throw new ClientError({
            kind: 'forbidden',
            message: `Links to ${new URL(url).host} are not opened`,
          });
        }
        await shell.openExternal(url);
        return null;
      },
    };
  }
}
