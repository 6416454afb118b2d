/**
 * HTTP client of the notary service, shared by Electron's main process (Node's `fetch`, session token in
 * `safeStorage`) and the web client (the browser's `fetch`, session in the server's HttpOnly cookie).
 *
 * - Identity (docs/api.md, Signing in): e-mail code -> session token (7 days) -> session JWT (5 minutes at most,
 *   `GET /api/auth/token`), renewed on a timer before it expires and again on any 401; a renewal refused with
 *   401 means the session is over (`onSessionExpired`).
 * - The typed API: tRPC `AppRouter` at `/trpc` (`import type`, nothing of the server is bundled), the IPFS
 *   import (`documents.importIpfs`) and an imported document's gateway link (`documents.view`) included.
 * - Binary routes: certificate (`GET /api/documents/:id/certificate?signed=1`) and timestamp
 *   (`POST /api/documents/:id/timestamp`), named by the client (`downloads.ts`, never the server's
 *   `Content-Disposition`) and checked to be a PDF / a DER SEQUENCE before the caller may write them. The
 *   upload is platform-specific (streaming from disk in main, XHR in the browser) and uses `authorized()` +
 *   `uploadUrl()`.
 *
 * Every method rejects with a `ClientError`.
 */
import type { AppRouter } from '@notary/server/router';
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
  PublicDocumentDto,
} from '@notary/shared';
import { createTRPCClient, httpLink, type TRPCClient, TRPCClientError } from '@trpc/client';
import { z } from 'zod';
import type {
  GatewayLink,
  IpfsImportRequest,
  Language,
  NotaryPolicy,
  NotarySignedRecord,
  Organization,
  SessionInfo,
  WebCaptureRequest,
} from './bridge';
import { cidOfSource } from './cid';
import {
  assertDerSequence,
  assertPdf,
  certidaoFileName,
  certificateFileName,
  timestampFileName,
} from './downloads';
import {
  ClientError,
  errorFromResponse,
  isClientError,
  isNetworkFailure,
  kindForStatus,
  offlineError,
  retryAfterFrom,
  retryAfterFromBody,
  toClientError,
} from './errors';

/** Where the session token lives (Electron: encrypted with safeStorage). Absent in cookie mode. */
export interface SessionTokenStore {
  load(): Promise<string | null>;
  save(token: string | null): Promise<void>;
}

export interface NotaryClientOptions {
  /** Service base URL, e.g. `http://localhost:3000` (a trailing slash is dropped). */
  baseUrl: string;
  /**
   * `bearer`: the session token is kept by `store` and sent as `Authorization: Bearer` to `/api/auth/*`
   * (Electron main). `cookie`: the browser keeps the session cookie the server set (web client).
   */
  mode: 'bearer' | 'cookie';
  store?: SessionTokenStore;
  fetch?: typeof fetch;
  /** Called once when a running session is refused (renewal answered 401). */
  onSessionExpired?: () => void;
  /** Milliseconds since the epoch (tests move it). */
  now?: () => number;
}

/** A downloaded binary answer, already checked to be of the kind asked for. */
export interface BinaryFile {
  bytes: Uint8Array;
  /** Chosen by the client from the document's serial number (`downloads.ts`): a bare name, no path. */
  fileName: string;
  contentType: string;
  /** `X-Service-Signed` of certificates. */
  signed?: 'pades' | 'none';
  /** `X-Serial-Number` of answers that name their document (the certidão de permanência). */
  serialNumber?: string;
}

const OrganizationListSchema = z.array(
  z.looseObject({ id: z.string(), name: z.string(), slug: z.string().nullish() }),
);
const SignInSchema = z.looseObject({ token: z.string().min(1) });
const TokenSchema = z.looseObject({ token: z.string().min(1) });
const JwtClaimsSchema = z.looseObject({ exp: z.number(), iat: z.number().optional() });

/** Seconds before expiry at which the JWT is renewed: a third of its life, at most one minute. */
function renewalMargin(lifetimeSeconds: number): number {
  return Math.min(60, Math.max(1, lifetimeSeconds / 3));
}

/** `exp`/`iat` of a JWT, read without verifying (the server verifies; the client only schedules renewal). */
export function jwtTimes(jwt: string): { exp: number; iat: number } {
  const payload = jwt.split('.')[1];
  if (!payload) throw new ClientError({ kind: 'server', message: 'Malformed session token from the server' });
  const base64 = payload.replace(/-/g, '+').replace(/_/g, '/');
  const json = new TextDecoder().decode(Uint8Array.from(atob(base64), (c) => c.charCodeAt(0)));
  const claims = JwtClaimsSchema.parse(JSON.parse(json));
  return { exp: claims.exp, iat: claims.iat ?? claims.exp - 300 };
}

/**
 * True when `url` is an http(s) link without credentials to `<gateway>/ipfs/<cid>` (path-style gateway, IPFS
 * HTTP Gateway spec; the gateway may sit under a base path), whatever its query (`filename`, `download`).
 */
export function isGatewayUrlOf(url: string, cid: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if ((u.protocol !== 'https:' && u.protocol !== 'http:') || u.username || u.password) return false;
  return u.pathname.endsWith(`/ipfs/${cid}`) || u.pathname.endsWith(`/ipfs/${cid}/`);
}

export class NotaryClient {
  readonly baseUrl: string;
  private readonly mode: 'bearer' | 'cookie';
  private readonly store: SessionTokenStore | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly now: () => number;
  private readonly onSessionExpired: (() => void) | undefined;
  private jwtValue: { token: string; exp: number; iat: number } | null = null;
  private jwtPending: Promise<string> | null = null;
  private renewTimer: ReturnType<typeof setTimeout> | null = null;
  private active = false;
  private closed = false;
  /** tRPC client for public procedures (no credentials). */
  private readonly publicApi: TRPCClient<AppRouter>;
  /** tRPC client that sends the session JWT. */
  private readonly api: TRPCClient<AppRouter>;

  constructor(options: NotaryClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.mode = options.mode;
    this.store = options.store;
    // Bound: the browser's fetch throws "Illegal invocation" when called as a method of another object.
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.now = options.now ?? Date.now;
    this.onSessionExpired = options.onSessionExpired;
    if (this.mode === 'bearer' && !this.store) throw new Error('bearer mode needs a session token store');
    const link = (auth: boolean) =>
      httpLink({
        url: `${this.baseUrl}/trpc`,
        fetch: (input, init) => this.fetchImpl(input, init),
        headers: auth ? async () => ({ authorization: `Bearer ${await this.jwt()}` }) : {},
      });
    this.publicApi = createTRPCClient<AppRouter>({ links: [link(false)] });
    this.api = createTRPCClient<AppRouter>({ links: [link(true)] });
  }

  /* ---------------------------------------------------------------- identity */

  /** `POST /api/auth/email-otp/send-verification-otp`: mails a 6-digit code (any address gets an account). */
  async requestCode(email: string): Promise<void> {
    await this.authRequest('POST', '/email-otp/send-verification-otp', { email, type: 'sign-in' }, false);
  }

  /** `POST /api/auth/sign-in/email-otp`, then the first JWT; starts the renewal timer. */
  async signIn(email: string, code: string): Promise<SessionInfo> {
    const body = SignInSchema.safeParse(
      await this.authRequest('POST', '/sign-in/email-otp', { email, otp: code }, false),
    );
    if (!body.success) throw new ClientError({ kind: 'server', message: 'Unexpected sign-in answer' });
    if (this.mode === 'bearer') await this.store?.save(body.data.token);
    this.jwtValue = null;
    this.active = true;
    return this.sessionInfo();
  }

  /**
   * The current session, or null when there is none. Rejects with `session-expired` when a stored session
   * token (bearer mode) is refused; in cookie mode a refused cookie is indistinguishable from none (null).
   */
  async session(): Promise<SessionInfo | null> {
    if (this.mode === 'bearer' && !(await this.store?.load())) return null;
    try {
      await this.jwt();
    } catch (e) {
      if (this.mode === 'cookie' && isClientError(e) && e.kind === 'session-expired') return null;
      throw e;
    }
    this.active = true;
    this.scheduleRenewal();
    return this.sessionInfo();
  }

  /** Who the caller is (tRPC `session.me`) and the organizations they may switch to. */
  async sessionInfo(): Promise<SessionInfo> {
    const [me, organizations] = await Promise.all([this.me(), this.organizations()]);
    return { me, organizations };
  }

  me(): Promise<MeDto> {
    return this.call(() => this.api.session.me.query());
  }

  /** `GET /api/auth/organization/list`: the caller's organizations. */
  async organizations(): Promise<Organization[]> {
    const parsed = OrganizationListSchema.safeParse(await this.authRequest('GET', '/organization/list'));
    if (!parsed.success) throw new ClientError({ kind: 'server', message: 'Unexpected organization list' });
    return parsed.data
      .map((o) => ({ id: o.id, name: o.name, slug: o.slug ?? '' }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** `POST /api/auth/organization/set-active` (null: personal workspace), then a fresh JWT naming it. */
  async setTenant(orgId: string | null): Promise<SessionInfo> {
    await this.authRequest('POST', '/organization/set-active', { organizationId: orgId });
    this.jwtValue = null;
    return this.sessionInfo();
  }

  /** `POST /api/auth/sign-out`; forgets the tokens even when the server cannot be reached. */
  async signOut(): Promise<void> {
    try {
      await this.authRequest('POST', '/sign-out', {});
    } catch (e) {
      // Signing out must always work locally; a session the server already forgot is signed out anyway.
      if (!isClientError(e) || !['offline', 'session-expired', 'not-signed-in'].includes(e.kind)) throw e;
    } finally {
      await this.forget();
    }
  }

  /** Stops the renewal timer and forgets the JWT (the session token stays). */
  close(): void {
    this.closed = true;
    this.active = false;
    this.clearTimer();
  }

  /**
   * A valid session JWT, fetched from `GET /api/auth/token` when missing or within the renewal margin.
   * Rejects with `not-signed-in` (no session), `session-expired` (401), `offline`.
   */
  async jwt(): Promise<string> {
    const current = this.jwtValue;
    const nowS = this.now() / 1000;
    if (current && current.exp - renewalMargin(current.exp - current.iat) > nowS) return current.token;
    this.jwtPending ??= this.fetchJwt().finally(() => {
      this.jwtPending = null;
    });
    return this.jwtPending;
  }

  private async fetchJwt(): Promise<string> {
    if (this.mode === 'bearer' && !(await this.store?.load())) {
      throw new ClientError({ kind: 'not-signed-in', message: 'Not signed in' });
    }
    let body: unknown;
    try {
      body = await this.authRequest('GET', '/token');
    } catch (e) {
      if (isClientError(e) && e.status === 401) {
        const hadSession = this.active;
        await this.forget();
        if (hadSession) this.onSessionExpired?.();
        throw new ClientError({ kind: 'session-expired', message: 'The session has expired', status: 401 });
      }
      throw e;
    }
    const parsed = TokenSchema.safeParse(body);
    if (!parsed.success) throw new ClientError({ kind: 'server', message: 'Unexpected token answer' });
    const times = jwtTimes(parsed.data.token);
    this.jwtValue = { token: parsed.data.token, ...times };
    this.scheduleRenewal();
    return parsed.data.token;
  }

  /** Renews the JWT before it expires, so a refused session shows up even while the user is idle. */
  private scheduleRenewal(): void {
    this.clearTimer();
    const jwt = this.jwtValue;
    if (!jwt || !this.active || this.closed) return;
    const at = (jwt.exp - renewalMargin(jwt.exp - jwt.iat)) * 1000;
    this.setTimer(Math.max(1000, at - this.now()));
  }

  private setTimer(delayMs: number): void {
    this.renewTimer = setTimeout(() => {
      this.renewTimer = null;
      this.jwtValue = null;
      this.jwt().catch((e: unknown) => {
        // Offline: try again shortly; the session itself may well be fine.
        if (isClientError(e) && e.kind === 'offline' && this.active && !this.closed) this.setTimer(15_000);
      });
    }, delayMs);
    // Node (main process, tests): the timer must not keep the process alive on its own.
    (this.renewTimer as { unref?: () => void }).unref?.();
  }

  private clearTimer(): void {
    if (this.renewTimer !== null) clearTimeout(this.renewTimer);
    this.renewTimer = null;
  }

  private async forget(): Promise<void> {
    this.active = false;
    this.jwtValue = null;
    this.clearTimer();
    if (this.mode === 'bearer') await this.store?.save(null);
  }

  /**
   * Runs `fn` with a valid JWT; when `fn` meets a 401 (the JWT expired in flight, or the server forgot the
   * session), renews once and retries. A refused renewal, or a second 401, is `session-expired`.
   */
  async authorized<T>(fn: (jwt: string) => Promise<T>): Promise<T> {
    const first = await this.jwt();
    try {
      return await fn(first);
    } catch (e) {
      if (!isClientError(e) || e.status !== 401) throw e;
    }
    this.jwtValue = null;
    const jwt = await this.jwt();
    try {
      return await fn(jwt);
    } catch (e) {
      if (!isClientError(e) || e.status !== 401) throw e;
      const hadSession = this.active;
      await this.forget();
      if (hadSession) this.onSessionExpired?.();
      throw new ClientError({ kind: 'session-expired', message: 'The session has expired', status: 401 });
    }
  }

  /** A request to better-auth at `/api/auth<route>`; JSON in and out. */
  private async authRequest(
    method: 'GET' | 'POST',
    route: string,
    body?: unknown,
    withSession = true,
  ): Promise<unknown> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (withSession && this.mode === 'bearer') {
      const token = await this.store?.load();
      if (!token) throw new ClientError({ kind: 'not-signed-in', message: 'Not signed in' });
      headers.authorization = `Bearer ${token}`;
    }
    return this.request(`/api/auth${route}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  }

  /** `fetch` + JSON; non-2xx answers become `ClientError`s, no answer at all `offline`. */
  private async request(path: string, init: RequestInit): Promise<unknown> {
    const res = await this.send(path, init);
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (!res.ok) throw errorFromResponse(res.status, json, res.headers);
    return json;
  }

  private async send(path: string, init: RequestInit): Promise<Response> {
    const url = `${this.baseUrl}${path}`;
    try {
      // Cookie mode: the browser sends the session cookie to its own origin (`same-origin`, the default).
      return await this.fetchImpl(url, { credentials: 'same-origin', cache: 'no-store', ...init });
    } catch (e) {
      if (e instanceof Error && e.name === 'AbortError') throw toClientError(e);
      throw offlineError(this.baseUrl, e);
    }
  }

  /** An authenticated tRPC call: error mapping and one retry on 401. */
  private call<T>(fn: () => Promise<T>): Promise<T> {
    return this.authorized(() => this.callPublic(fn));
  }

  /** A tRPC call without credentials (public procedures): error mapping only. */
  private async callPublic<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      throw this.fromTrpc(e);
    }
  }

  private fromTrpc(e: unknown): ClientError {
    if (isClientError(e)) return e;
    if (e instanceof TRPCClientError) {
      if (isClientError(e.cause)) return e.cause;
      const response = (e.meta as { response?: Response } | undefined)?.response;
      const data = e.data as
        | { httpStatus?: number; code?: string; retryAfterSeconds?: unknown }
        | null
        | undefined;
      const status = data?.httpStatus ?? response?.status;
      if (status === undefined) {
        if (isNetworkFailure(e.cause) || isNetworkFailure(e)) return offlineError(this.baseUrl, e.cause ?? e);
        return new ClientError({ kind: 'server', message: e.message }, { cause: e });
      }
      // The wait of a 429: `Retry-After`, else the error's `data.retryAfterSeconds` (platform/src/trpc/errors.ts).
      const retryAfterSeconds =
        status === 429 ? (retryAfterFrom(response?.headers) ?? retryAfterFromBody(data)) : undefined;
      return new ClientError(
        {
          kind: /Origin .* is not allowed/.test(e.message) ? 'origin' : kindForStatus(status, data?.code),
          message: e.message,
          status,
          ...(retryAfterSeconds !== undefined ? { retryAfterSeconds } : {}),
        },
        { cause: e },
      );
    }
    return toClientError(e);
  }

  /* ---------------------------------------------------------------- documents */

  health(): Promise<unknown> {
    return this.request('/health', { method: 'GET' });
  }

  publicVerify(hash: string) {
    return this.callPublic(() => this.publicApi.public.verify.query({ hash }));
  }

  publicDocument(serial: string): Promise<PublicDocumentDto> {
    return this.callPublic(() => this.publicApi.public.documentBySerial.query({ serial }));
  }

  onchainInfo() {
    return this.callPublic(() => this.publicApi.system.onchainInfo.query());
  }

  /** tRPC `documents.list` (REST `GET /api/documents`): one page and the cursor of the next (null at the end). */
  listDocuments(request: DocumentListQuery = {}): Promise<DocumentListDto> {
    return this.call(() => this.api.documents.list.query(request));
  }

  async getDocument(id: string): Promise<DocumentDto> {
    return (await this.call(() => this.api.documents.get.query({ id }))).document;
  }

  compareHash(id: string, hash: string): Promise<HashComparisonDto> {
    return this.call(() => this.api.documents.verify.query({ id, hash }));
  }

  /**
   * tRPC `documents.importIpfs` (REST `POST /api/documents/import/ipfs`): the server fetches the CID from its
   * gateways, verifies it block by block and records it like an upload (201, `sourceType: "ipfs"`,
   * `sourceUri: "ipfs://<cid>"`). Not retried but on a 401 before the server acted (`authorized`).
   * @throws ClientError `bad-request` (CID or consent refused), `forbidden` (below editor), `too-large`
   *   (over 250 MB), `rate-limited` (10 a minute, with `retryAfterSeconds`), `bad-gateway` (gateway failure
   *   or content not matching the CID).
   */
  importIpfs(request: IpfsImportRequest): Promise<DocumentDto> {
    const { cid, fileName, consent } = request;
    return this.call(() =>
      this.api.documents.importIpfs.mutate({ cid, consent, ...(fileName ? { fileName } : {}) }),
    );
  }

  /**
   * tRPC `documents.capture` (REST `POST /api/documents/capture`): the server captures the page and records its WACZ
   * (201, `sourceType: "web-capture"`, `sourceUri` the URL, `screenshot` a presigned PNG URL valid 300 s). Not retried
   * but on a 401 before the server acted (`authorized`).
   * @throws ClientError `bad-request` (400 URL, scheme or destination), `forbidden` (403 below editor),
   *   `rate-limited` (429), `bad-gateway` (502 unreachable, 504 timed out; `status` tells), `unavailable`
   *   (503 no Chromium).
   */
  captureWeb(request: WebCaptureRequest): Promise<DocumentDto> {
    const { url, fileName, consent } = request;
    return this.call(() =>
      this.api.documents.capture.mutate({ url, consent, ...(fileName ? { fileName } : {}) }),
    );
  }

  /**
   * tRPC `documents.notarySignaturePrepare` (REST `POST /api/documents/{id}/notary-signature`): the service
   * prepares the tabelião's own signature of the certificate for the announced chain (base64 DER, leaf first)
   * and policy, and answers what must be signed: the CAdES signed attributes (base64 DER), to be signed with
   * SHA-256, before `expiresAt` (docs/certificates.md).
   * @throws ClientError `bad-request` (chain incomplete, expired, no key usage for signatures), `forbidden`
   *   (another tenant's document, below editor), `unavailable` (AD-RT without a TSA).
   */
  prepareNotarySignature(request: {
    id: string;
    certificates: string[];
    policy: NotaryPolicy;
    lang: Language;
  }): Promise<{
    sessionId: string;
    signedAttributes: string;
    digestAlgorithm: 'SHA-256';
    expiresAt: string;
  }> {
    return this.call(() => this.api.documents.notarySignaturePrepare.mutate(request));
  }

  /**
   * tRPC `documents.notarySignatureComplete` (REST `PUT /api/documents/{id}/notary-signature/{sessionId}`):
   * hands in the signature value (base64) of a prepared session; the service checks and embeds it.
   * @returns the signed certificate's record, naming both signers.
   * @throws ClientError `bad-request` (a value that does not verify, a revoked certificate), `gone` or
   *   `not-found` (an expired, completed or unknown session), `forbidden`.
   */
  completeNotarySignature(request: {
    id: string;
    sessionId: string;
    signature: string;
  }): Promise<NotarySignedRecord> {
    return this.call(() => this.api.documents.notarySignatureComplete.mutate(request));
  }

  /**
   * The CID of a document imported from IPFS and its link on the public gateway: the view URL the server
   * gives (`<IPFS_PUBLIC_GATEWAY>/ipfs/<cid>?filename=<name>`, spec Rule 3). The link must be http(s), without
   * credentials, and name the document's own CID, or it is not handed on (it may be opened outside).
   * @throws ClientError `bad-request` for a document of another source, `server` for a link that does not
   *   name the CID, or the server's error (`gone` after LGPD deletion).
   */
  async gatewayLink(id: string): Promise<GatewayLink> {
    const cid = cidOfSource(await this.getDocument(id));
    if (!cid) throw new ClientError({ kind: 'bad-request', message: 'Not a document imported from IPFS' });
    const { viewUrl } = await this.call(() => this.api.documents.view.query({ id }));
    if (!isGatewayUrlOf(viewUrl, cid)) {
      throw new ClientError({
        kind: 'server',
        message: 'The server gave a gateway link that does not name the CID',
      });
    }
    return { cid, url: viewUrl };
  }

  async acceptInvitation(invitationId: string): Promise<string> {
    return (await this.call(() => this.api.team.acceptInvitation.mutate({ invitationId }))).organizationId;
  }

  /** `POST /api/documents/upload`: the URL the platform's streaming upload sends to. */
  uploadUrl(): string {
    return `${this.baseUrl}/api/documents/upload`;
  }

  /**
   * Certificate PDF; `signed=1` asks for PAdES (the server says in `X-Service-Signed` whether it signed).
   * Named `certificado-<serial>.pdf` / `certificate-<serial>.pdf` after the document's record.
   * @throws ClientError `invalid-content` when the answer does not start with `%PDF-`, or the server's error.
   */
  async certificate(id: string, language: Language): Promise<BinaryFile> {
    const { serialNumber } = await this.getDocument(id);
    const file = await this.binary(
      'GET',
      `/api/documents/${encodeURIComponent(id)}/certificate?signed=1&lang=${language}`,
    );
    assertPdf(file.bytes);
    return { ...file, fileName: certificateFileName(serialNumber, language) };
  }

  /**
   * The ata notarial draft of a web capture (PDF/A-3b), named `minuta-ata-<serial>.pdf`: with `requester`, a new
   * request (`POST /api/documents/:id/ata`, editors and up); without, the last one again (`GET`).
   * @throws ClientError `invalid-content` when the answer does not start with `%PDF-`, or the server's error
   *   (`bad-request` for an invalid CPF or a document that is no web capture, `not-found` before any request).
   */
  async ataDraft(id: string, requester?: AtaRequesterInput): Promise<BinaryFile> {
    const { serialNumber } = await this.getDocument(id);
    const route = `/api/documents/${encodeURIComponent(id)}/ata`;
    const file = requester
      ? await this.binary('POST', route, { requester })
      : await this.binary('GET', route);
    assertPdf(file.bytes);
    return { ...file, fileName: `minuta-ata-${serialNumber}.pdf` };
  }

  /** `monitors.list` (`GET /api/monitors`): the workspace's monitorings, newest first, without their runs. */
  async listMonitors(): Promise<MonitorListDto> {
    return this.call(() => this.api.monitors.list.query());
  }

  /** `monitors.get` (`GET /api/monitors/:id`): a monitoring with its state and every run. */
  async getMonitor(id: string): Promise<MonitorDto> {
    return this.call(() => this.api.monitors.get.query({ id }));
  }

  /**
   * `monitors.create` (`POST /api/monitors`): `interval` and `period` as ISO 8601 durations. Rejects with
   * `bad-request` (URL, or under the operator's minimum / over the maximum: the server's message names it),
   * `forbidden` (below editor), `too-large` (the workspace is at its storage quota), `rate-limited`.
   */
  async createMonitor(input: MonitorInput): Promise<MonitorDto> {
    return this.call(() => this.api.monitors.create.mutate(input));
  }

  /** `monitors.cancel` (`DELETE /api/monitors/:id`): the runs made stay; editors and up. */
  async cancelMonitor(id: string): Promise<MonitorDto> {
    return this.call(() => this.api.monitors.cancel.mutate({ id }));
  }

  /**
   * The certidão de permanência of a monitoring (`GET /api/monitors/:id/certidao`, PDF/A-3b), named
   * `certidao-permanencia-<serial>.pdf` after `X-Serial-Number` (`certidaoFileName`): the one issued after the last run, or one
   * issued now (editors and up; a reader then gets `forbidden`).
   * @throws ClientError `invalid-content` when the answer does not start with `%PDF-`, or the server's error.
   */
  async certidao(id: string): Promise<BinaryFile> {
    const file = await this.binary('GET', `/api/monitors/${encodeURIComponent(id)}/certidao`);
    assertPdf(file.bytes);
    return { ...file, fileName: certidaoFileName(file.serialNumber ?? null) };
  }

  /**
   * RFC 3161 timestamp response of the document's hash (DER `TimeStampResp`, `.tsr`), named `<serial>.tsr`.
   * @throws ClientError `invalid-content` when the answer is not one DER SEQUENCE, or the server's error.
   */
  async timestamp(id: string): Promise<BinaryFile> {
    const { serialNumber } = await this.getDocument(id);
    const file = await this.binary('POST', `/api/documents/${encodeURIComponent(id)}/timestamp`);
    assertDerSequence(file.bytes);
    return { ...file, fileName: timestampFileName(serialNumber) };
  }

  /** A binary answer of an authenticated route; its `Content-Disposition` is ignored (the caller names it). */
  private binary(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
  ): Promise<Omit<BinaryFile, 'fileName'>> {
    return this.authorized(async (jwt) => {
      const res = await this.send(path, {
        method,
        headers: {
          authorization: `Bearer ${jwt}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (!res.ok) {
        const text = await res.text();
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        throw errorFromResponse(res.status, json, res.headers);
      }
      const bytes = new Uint8Array(await res.arrayBuffer());
      const signed = res.headers.get('x-service-signed');
      const serialNumber = res.headers.get('x-serial-number');
      return {
        bytes,
        contentType: res.headers.get('content-type') ?? 'application/octet-stream',
        ...(signed === 'pades' || signed === 'none' ? { signed } : {}),
        ...(serialNumber ? { serialNumber } : {}),
      };
    });
  }
}
