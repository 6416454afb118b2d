import { createHash, X509Certificate } from 'node:crypto';
import { constants } from 'node:fs';
import { access, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { AppError, LIMITS } from '@notary/shared';
import { CAPTURE_SCREENSHOT } from '@notary/shared/limits';
import { type Browser, type BrowserContext, chromium, type Page, type Request } from 'playwright-core';
import {
  type BlockedRequest,
  type CapturedTls,
  type CaptureRecord,
  withCaptureRecord,
} from '../../ports/capture';
import { AddressPolicy, type AllowEntry } from './address-policy';
import { CaptureProxy, type RefusedDestination, type Resolver } from './proxy';
import { type HarEntry, missingBodies, writeWacz } from './wacz';

/** What the capture adapter is configured with (`CHROMIUM_PATH`, `CAPTURE_*`; see `CaptureSettings`). */
export interface CaptureConfig {
  chromiumPath: string;
  /** The whole capture's bound, launch to archive, in milliseconds (`CAPTURE_TIMEOUT_MS`). */
  timeoutMs: number;
  /** Browsers at once (`CAPTURE_CONCURRENCY`). */
  concurrency: number;
  /** Exceptions to the public-addresses-only rule (`CAPTURE_ALLOW_HOSTS`). */
  allowHosts: AllowEntry[];
  /** PEM of extra CA certificates the capture browser trusts (`CAPTURE_CA_CERTS`: intranets, tests). */
  caCertsPem: string | undefined;
}

/** The fixed, documented browsing conditions of every capture (docs/api.md, Web capture). */
export const CAPTURE_VIEWPORT = { width: CAPTURE_SCREENSHOT.width, height: 800 } as const;
export const CAPTURE_LOCALE = 'en-US';
export const CAPTURE_TIMEZONE = 'UTC';
/** The screenshot's height cap in CSS pixels: a taller page is cut there (recorded as `truncated`). */
export const SCREENSHOT_MAX_HEIGHT = CAPTURE_SCREENSHOT.maxHeight;
/** Run in the page (a string: the server's TypeScript has no DOM types): the document's height in CSS px. */
const PAGE_HEIGHT_SCRIPT =
  'Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0)';
/**
 * Run in the page: scrolls down by most of a screen at a time to the height cap, pausing between steps so
 * lazy content (loading="lazy", intersection observers) starts loading, then back to the top.
 */
const SCROLL_SCRIPT = `(async () => {
  const step = Math.max(200, Math.floor(window.innerHeight * 0.8));
  const pause = () => new Promise((r) => setTimeout(r, 120));
  for (let y = 0; y < Math.min(document.documentElement.scrollHeight, ${SCREENSHOT_MAX_HEIGHT}); y += step) {
    window.scrollTo(0, y);
    await pause();
  }
  window.scrollTo(0, 0);
  await pause();
})()`;
/** Share of the time bound given to loading and scrolling; the rest is for screenshot, PDF and archive. */
const PAGE_PHASE_SHARE = 0.55;

const INSTALL_HINT =
  'Web capture needs Chromium: install it (Debian: apt-get install chromium) or set CHROMIUM_PATH to its executable';

/** What a capture needs beside its configuration: how it names itself, and (tests) a resolver. */
export interface BrowserCaptureOptions {
  userAgentProduct: string;
  software: string;
  resolve?: Resolver;
  /** Told of each destination refused by address, with what it resolved to (for the operator's log only). */
  onRefusal?: (refused: RefusedDestination) => void;
}

/** The files a capture leaves in its work directory, for the process that started it to read. */
export const CAPTURE_FILES = { wacz: 'capture.wacz', screenshot: 'screenshot.png' } as const;

/** What a finished capture reports; its archive and screenshot are files in the work directory. */
export interface BrowserCaptureResult {
  record: CaptureRecord;
  /** Size of `CAPTURE_FILES.wacz`, bytes. */
  waczBytes: number;
  /** Size of `CAPTURE_FILES.screenshot`, bytes. */
  screenshotBytes: number;
}

/**
 * Chromium's switches for every capture. Beside quietness (no background requests, no sync), they close the
 * ways out that do not go through the capture proxy: WebRTC may only use proxied connections (its UDP would
 * reach any address the page names, loopback included), QUIC is off (UDP again), and Chromium's own resolver
 * answers nothing, so a name is only ever resolved by the proxy, which checks the address it connects to.
 */
export const CHROMIUM_ARGS = [
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-domain-reliability',
  '--disable-sync',
  '--no-pings',
  '--no-first-run',
  '--disable-quic',
  '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
  '--enforce-webrtc-ip-permission-check',
  '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
  '--disable-features=DnsOverHttps,WebRtcAllowInputVolumeAdjustment',
] as const;

/**
 * One capture in a headless Chromium (playwright-core driving the system's browser), meant to run in the
 * capture process (`capture-process.ts`), never in the service: the browser keeps its sandbox on
 * (`chromiumSandbox: true`; as root Chromium refuses, which is why the capture process runs as another user),
 * inherits only the capture process's minimal environment, and reaches the network only through a
 * `CaptureProxy`. One fresh context (no profile, no cookies, downloads refused, service workers blocked,
 * permissions denied, fixed viewport, locale, time zone and a user agent naming the service); the page loaded,
 * scrolled for lazy content and recorded (HAR with bodies), then a full-page screenshot and a PDF rendering;
 * browser and proxy are gone before the WACZ is written to `workDir`.
 * @throws AppError as `WebCapturer.capture` documents; `signal`'s reason once it aborts.
 */
export async function captureInBrowser(
  url: URL,
  config: Omit<CaptureConfig, 'concurrency'>,
  options: BrowserCaptureOptions,
  workDir: string,
  signal?: AbortSignal,
): Promise<BrowserCaptureResult> {
  try {
    await access(config.chromiumPath, constants.X_OK);
  } catch {
    throw new AppError('SERVICE_UNAVAILABLE', `${INSTALL_HINT} (not found: ${config.chromiumPath})`);
  }
  signal?.throwIfAborted();
  const started = new Date();
  const deadline = started.getTime() + config.timeoutMs;
  const pageDeadline = started.getTime() + config.timeoutMs * PAGE_PHASE_SHARE;
  const left = (until = deadline) => Math.max(1, until - Date.now());
  const policy = new AddressPolicy(config.allowHosts);
  const spkiHashes = config.caCertsPem ? spkiHashesOf(config.caCertsPem) : [];
  const proxy = new CaptureProxy(policy, {
    maxBytes: LIMITS.maxUploadBytes,
    ...(options.resolve ? { resolve: options.resolve } : {}),
    ...(options.onRefusal ? { onRefusal: options.onRefusal } : {}),
  });
  let browser: Browser | undefined;
  let timedOut = false;
  // The hard bound: whatever the page does (an endless script), the browser is gone at the deadline.
  const killer = setTimeout(() => {
    timedOut = true;
    void browser?.close().catch(() => undefined);
    void proxy.close();
  }, config.timeoutMs);
  const onAbort = () => {
    void browser?.close().catch(() => undefined);
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const proxyUrl = await proxy.start();
    browser = await chromium
      .launch({
        executablePath: config.chromiumPath,
        headless: true,
        chromiumSandbox: true,
        // Only what Chromium needs: the capture process's own minimal environment, named explicitly so that
        // nothing else can ever be inherited.
        env: browserEnvironment(),
        timeout: left(),
        proxy: { server: proxyUrl, bypass: '<-loopback>' },
        args: [
          ...CHROMIUM_ARGS,
          ...(spkiHashes.length > 0 ? [`--ignore-certificate-errors-spki-list=${spkiHashes.join(',')}`] : []),
        ],
      })
      .catch((e: unknown) => {
        throw launchError(e);
      });
    const version = browser.version();
    const userAgent = `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${version} Safari/537.36 ${options.userAgentProduct}`;
    const harPath = path.join(workDir, 'capture.har');
    const context = await browser.newContext({
      viewport: CAPTURE_VIEWPORT,
      userAgent,
      locale: CAPTURE_LOCALE,
      timezoneId: CAPTURE_TIMEZONE,
      acceptDownloads: false,
      serviceWorkers: 'block',
      permissions: [],
      recordHar: { path: harPath, content: 'embed', mode: 'full' },
    });
    const navigations: string[] = [];
    const session = await browse(context, url, navigations, { pageDeadline, left }, config.timeoutMs).catch(
      (e: unknown) => {
        throw refusedNavigation(navigations, proxy.blocked) ?? e;
      },
    );
    const { page } = session;
    const height = await bounded(page.evaluate<number>(PAGE_HEIGHT_SCRIPT), left()).catch(
      () => CAPTURE_VIEWPORT.height,
    );
    const shotHeight = Math.max(1, Math.min(height, SCREENSHOT_MAX_HEIGHT));
    const png = await page.screenshot({
      fullPage: true,
      clip: { x: 0, y: 0, width: CAPTURE_VIEWPORT.width, height: shotHeight },
      timeout: left(),
      animations: 'disabled',
    });
    const pdf = await bounded(page.pdf({ printBackground: true, format: 'A4' }), left()).catch(
      () => undefined,
    );
    const title = await bounded(page.title(), left()).catch(() => '');
    const unfinished = [...session.pending].map((r) => r.url());
    const tls = await session.tls;
    await bounded(context.close(), left());
    await browser.close();
    browser = undefined;
    await proxy.close();
    if (timedOut) throw timeoutError(config.timeoutMs);
    if (proxy.overLimit) throw new AppError('PAYLOAD_TOO_LARGE', 'The page exceeds the 250 MB archive bound');

    const har = JSON.parse(await readFile(harPath, 'utf8')) as { log: { entries: HarEntry[] } };
    await rm(harPath, { force: true });
    const finished = new Date();
    const finalUrl = session.finalUrl;
    const final = new URL(finalUrl);
    const record: CaptureRecord = {
      format: 'notary-web-capture/1',
      requestedUrl: url.href,
      finalUrl,
      status: session.status,
      redirects: session.redirects,
      serverIp:
        proxy.addressOf(final.hostname, Number(final.port || (final.protocol === 'https:' ? 443 : 80))) ??
        null,
      tls,
      responseHeaders: session.headers,
      servers: proxy.servers,
      blocked: [...proxy.blocked, ...session.blocked],
      failed: session.failed,
      unfinished,
      missingBodies: missingBodies(har.log.entries),
      startedAt: started.toISOString(),
      finishedAt: finished.toISOString(),
      browser: { name: 'Chromium', version },
      userAgent,
      locale: CAPTURE_LOCALE,
      timezone: CAPTURE_TIMEZONE,
      viewport: { ...CAPTURE_VIEWPORT },
      screenshot: { width: CAPTURE_VIEWPORT.width, height: shotHeight, truncated: height > shotHeight },
      title,
    };
    const screenshot = withCaptureRecord(png, record);
    await writeFile(path.join(workDir, CAPTURE_FILES.screenshot), screenshot);
    const wacz = await writeWacz(workDir, path.join(workDir, CAPTURE_FILES.wacz), {
      entries: har.log.entries,
      addressOf: (host, port) => proxy.addressOf(host, port),
      page: { url: finalUrl, title, ts: started.toISOString() },
      screenshot,
      pdf,
      record: Buffer.from(JSON.stringify(record, null, 2)),
      software: options.software,
      created: finished,
    });
    if (wacz.bytes > LIMITS.maxUploadBytes) {
      throw new AppError('PAYLOAD_TOO_LARGE', 'The page exceeds the 250 MB archive bound');
    }
    return { record, waczBytes: wacz.bytes, screenshotBytes: screenshot.length };
  } catch (e) {
    await browser?.close().catch(() => undefined);
    await proxy.close();
    signal?.throwIfAborted();
    if (e instanceof AppError) throw e;
    if (timedOut) throw timeoutError(config.timeoutMs);
    throw new AppError('INTERNAL', 'The capture failed', { cause: e });
  } finally {
    clearTimeout(killer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * The browser's environment: the capture process's own `PATH`, `HOME` and `TMPDIR` (its work directory),
 * a UTF-8 locale and UTC, nothing else.
 */
function browserEnvironment(): Record<string, string> {
  const env: Record<string, string> = { LANG: 'C.UTF-8', TZ: 'UTC' };
  for (const name of ['PATH', 'HOME', 'TMPDIR'] as const) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** A failed browser start, said so that an operator can act (no sandbox available is the likely one). */
function launchError(e: unknown): AppError {
  const message = errorText(e);
  if (/sandbox|namespace|setuid|running as root/i.test(message)) {
    return new AppError(
      'SERVICE_UNAVAILABLE',
      "Web capture is unavailable: Chromium's sandbox could not start (it needs unprivileged user namespaces; see docs/api.md, Web capture)",
      { cause: e },
    );
  }
  return new AppError('SERVICE_UNAVAILABLE', 'Web capture is unavailable: the browser did not start', {
    cause: e,
  });
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * Opens the page and loads `url` (navigation errors mapped to the route's statuses), waits for `load`,
 * scrolls to the bottom to trigger lazy content and waits for the network to settle, all until
 * `pageDeadline`; what still runs then is cut and recorded as unfinished.
 */
async function browse(
  context: BrowserContext,
  url: URL,
  navigations: string[],
  time: { pageDeadline: number; left: (until?: number) => number },
  timeoutMs: number,
) {
  const pending = new Set<Request>();
  const failed: Array<{ url: string; reason: string }> = [];
  const blocked: BlockedRequest[] = [];
  const page: Page = await context.newPage();
  // A page the capture did not ask for (a popup) is closed at once.
  context.on('page', (p) => {
    if (p !== page) void p.close().catch(() => undefined);
  });
  const session = await context.newCDPSession(page);
  await session.send('Network.enable');
  page.on('request', (r) => {
    pending.add(r);
    if (r.isNavigationRequest() && r.frame() === page.mainFrame()) navigations.push(r.url());
  });
  page.on('requestfinished', (r) => pending.delete(r));
  page.on('requestfailed', (r) => {
    pending.delete(r);
    const reason = r.failure()?.errorText ?? 'failed';
    if (/^(file|chrome|about|data|blob):/.test(r.url()) || reason === 'net::ERR_ACCESS_DENIED')
      blocked.push({ url: r.url(), ip: null, reason: `not loaded: ${reason}` });
    else failed.push({ url: r.url(), reason });
  });
  page.on('download', (d) => {
    blocked.push({ url: d.url(), ip: null, reason: 'download refused' });
    void d.cancel().catch(() => undefined);
  });
  // Chromium refuses file:// from a web page itself; it is still recorded when the console says so.
  page.on('console', (m) => {
    const text = m.text();
    const local = /Not allowed to load local resource: (\S+)/.exec(text);
    if (local?.[1]) blocked.push({ url: local[1], ip: null, reason: 'local resource refused' });
  });

  let response: Awaited<ReturnType<Page['goto']>>;
  try {
    // Committed is enough to go on: a page whose parsing never ends (a blocking script) is still captured
    // as far as it got, or cut by the deadline when its renderer is stuck.
    response = await page.goto(url.href, { waitUntil: 'commit', timeout: time.left(time.pageDeadline) });
  } catch (e) {
    throw navigationError(e, timeoutMs);
  }
  if (!response) throw new AppError('BAD_GATEWAY', `No response from ${url.host}`);
  await page
    .waitForLoadState('domcontentloaded', { timeout: time.left(time.pageDeadline) })
    .catch(() => undefined);
  await page.waitForLoadState('load', { timeout: time.left(time.pageDeadline) }).catch(() => undefined);
  await bounded(page.evaluate(SCROLL_SCRIPT), time.left(time.pageDeadline)).catch(() => undefined);
  await page
    .waitForLoadState('networkidle', { timeout: time.left(time.pageDeadline) })
    .catch(() => undefined);

  const redirects: CaptureRecord['redirects'] = [];
  const chain: Request[] = [];
  for (let r: Request | null = response.request(); r; r = r.redirectedFrom()) chain.unshift(r);
  for (const r of chain.slice(0, -1)) {
    const hop = await r.response();
    redirects.push({
      url: r.url(),
      status: hop?.status() ?? 0,
      location: (await hop?.headerValue('location')) ?? '',
    });
  }
  // Connection headers are the proxy's (it forwards everything else as received).
  const headers = (await response.headersArray())
    .filter((h) => !/^(connection|keep-alive|proxy-connection)$/i.test(h.name))
    .map((h): [string, string] => [h.name, h.value]);
  const finalUrl = response.url();
  // Awaited later, after the screenshot: never left rejected meanwhile.
  const tls = certificateOf(session, response, finalUrl).catch(() => null);
  return {
    page,
    pending,
    failed,
    blocked,
    redirects,
    headers,
    finalUrl,
    status: response.status(),
    tls,
  };
}

/** The main document's certificate: Playwright's details plus the DER from CDP (`Network.getCertificate`). */
async function certificateOf(
  session: import('playwright-core').CDPSession,
  response: NonNullable<Awaited<ReturnType<Page['goto']>>>,
  finalUrl: string,
): Promise<CapturedTls | null> {
  if (!finalUrl.startsWith('https:')) return null;
  const details = await response.securityDetails().catch(() => null);
  const chain = await session
    .send('Network.getCertificate', { origin: new URL(finalUrl).origin })
    .then((r) => r.tableNames)
    .catch(() => [] as string[]);
  const der = chain[0] ? Buffer.from(chain[0], 'base64') : undefined;
  if (!der) return null;
  const cert = new X509Certificate(der);
  return {
    protocol: details?.protocol ?? null,
    subject: cert.subject.replaceAll('\n', ', '),
    issuer: cert.issuer.replaceAll('\n', ', '),
    validFrom: new Date(cert.validFrom).toISOString(),
    validTo: new Date(cert.validTo).toISOString(),
    sha256Fingerprint: createHash('sha256').update(der).digest('hex'),
  };
}

/** Maps a failed navigation to the route's statuses: 400 refused destination, 502 unreachable, 504 time. */
function navigationError(e: unknown, timeoutMs: number): AppError {
  const message = e instanceof Error ? e.message : String(e);
  if (/Timeout \d+ms exceeded/.test(message)) return timeoutError(timeoutMs);
  if (/Download is starting/.test(message)) {
    return new AppError('BAD_REQUEST', 'The URL starts a download, not a page: nothing to capture');
  }
  return new AppError('BAD_GATEWAY', `The site could not be reached: ${netError(message)}`);
}

/**
 * 400 when the main document's navigation (the URL or a redirect of it) was refused by the proxy: the
 * destination is not allowed. Undefined when the failure was something else.
 */
function refusedNavigation(navigations: string[], blocked: BlockedRequest[]): AppError | undefined {
  const hosts = new Set(navigations.map((n) => hostPort(n)));
  const refused = blocked.find((b) => hosts.has(hostPort(b.url)));
  if (!refused) return undefined;
  return new AppError(
    'BAD_REQUEST',
    `Destination not allowed: ${refused.url} (${refused.reason}); captures reach public addresses only`,
  );
}

/** `host:port` of a URL (default ports filled in), or the input when it does not parse. */
function hostPort(u: string): string {
  try {
    const url = new URL(u);
    const port = url.port || (url.protocol === 'https:' ? '443' : url.protocol === 'http:' ? '80' : '');
    return `${url.hostname}:${port}`;
  } catch {
    return u;
  }
}

/** Resolves or rejects as `promise`, or rejects after `ms` (a page call that a hung renderer never answers). */
function bounded<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timeout ${ms}ms exceeded`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function timeoutError(ms: number): AppError {
  return new AppError('GATEWAY_TIMEOUT', `The capture did not finish within ${ms} ms (CAPTURE_TIMEOUT_MS)`);
}

/** Chromium's `net::ERR_*` name out of Playwright's message, else its first line. */
function netError(message: string): string {
  return /net::ERR_[A-Z_]+/.exec(message)?.[0] ?? message.split('\n')[0] ?? message;
}

/**
 * Base64 SHA-256 of each certificate's SubjectPublicKeyInfo in `pem`: what Chromium's
 * `--ignore-certificate-errors-spki-list` takes (a chain presented with one of these keys is accepted).
 */
function spkiHashesOf(pem: string): string[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => {
    const spki = new X509Certificate(b).publicKey.export({ type: 'spki', format: 'der' });
    return createHash('sha256').update(spki).digest('base64');
  });
}
