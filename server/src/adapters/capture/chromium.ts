import { createHash, X509Certificate } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AppError, LIMITS } from '@notary/shared';
import { type Browser, type BrowserContext, chromium, type Page, type Request } from 'playwright-core';
import {
  type BlockedRequest,
  type CapturedTls,
  type CaptureRecord,
  type WebCapture,
  type WebCapturer,
  withCaptureRecord,
} from '../../ports/capture';
import { AddressPolicy, type AllowEntry } from './address-policy';
import { CaptureProxy, type Resolver } from './proxy';
import { type HarEntry, writeWacz } from './wacz';

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
export const CAPTURE_VIEWPORT = { width: 1280, height: 800 } as const;
export const CAPTURE_LOCALE = 'en-US';
export const CAPTURE_TIMEZONE = 'UTC';
/** The screenshot's height cap in CSS pixels: a taller page is cut there (recorded as `truncated`). */
export const SCREENSHOT_MAX_HEIGHT = 16_384;
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
/** Captures that may wait for a browser beyond those running; one more is refused with 429. */
const QUEUE_MAX = 4;
/** Share of the time bound given to loading and scrolling; the rest is for screenshot, PDF and archive. */
const PAGE_PHASE_SHARE = 0.55;

const INSTALL_HINT =
  'Web capture needs Chromium: install it (Debian: apt-get install chromium) or set CHROMIUM_PATH to its executable';

/**
 * The capture adapter (issue 15): per capture a new headless Chromium (playwright-core driving the system's
 * browser) whose every connection goes through a `CaptureProxy`, one fresh context (no profile, no cookies,
 * downloads refused, service workers blocked, permissions denied, fixed viewport, locale, time zone and a user
 * agent naming the service), the page loaded, scrolled for lazy content and recorded (HAR with bodies), then a
 * full-page screenshot and a PDF rendering; browser and proxy are gone before the WACZ is written.
 */
export class ChromiumCapturer implements WebCapturer {
  private readonly policy: AddressPolicy;
  private readonly spkiHashes: string[];
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly config: CaptureConfig,
    private readonly options: { userAgentProduct: string; software: string; resolve?: Resolver },
  ) {
    this.policy = new AddressPolicy(config.allowHosts);
    this.spkiHashes = config.caCertsPem ? spkiHashesOf(config.caCertsPem) : [];
  }

  async capture(url: URL, options: { signal?: AbortSignal } = {}): Promise<WebCapture> {
    try {
      await access(this.config.chromiumPath, constants.X_OK);
    } catch {
      throw new AppError('SERVICE_UNAVAILABLE', `${INSTALL_HINT} (not found: ${this.config.chromiumPath})`);
    }
    if (this.running >= this.config.concurrency && this.waiting.length >= QUEUE_MAX) {
      throw new AppError('RATE_LIMITED', 'The capture queue is full: try again shortly', {
        retryAfterSeconds: Math.ceil(this.config.timeoutMs / 1000),
      });
    }
    await this.acquire(options.signal);
    try {
      return await this.run(url, options.signal);
    } finally {
      this.release();
    }
  }

  private acquire(signal: AbortSignal | undefined): Promise<void> {
    if (this.running < this.config.concurrency) {
      this.running++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener('abort', onAbort);
        this.running++;
        resolve();
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(go);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(go);
    });
  }

  private release(): void {
    this.running--;
    this.waiting.shift()?.();
  }

  private async run(url: URL, signal: AbortSignal | undefined): Promise<WebCapture> {
    signal?.throwIfAborted();
    const started = new Date();
    const deadline = started.getTime() + this.config.timeoutMs;
    const pageDeadline = started.getTime() + this.config.timeoutMs * PAGE_PHASE_SHARE;
    const left = (until = deadline) => Math.max(1, until - Date.now());
    const dir = await mkdtemp(path.join(os.tmpdir(), 'notary-capture-'));
    const dispose = () => rm(dir, { recursive: true, force: true });
    const proxy = new CaptureProxy(this.policy, {
      maxBytes: LIMITS.maxUploadBytes,
      ...(this.options.resolve ? { resolve: this.options.resolve } : {}),
    });
    let browser: Browser | undefined;
    let timedOut = false;
    // The hard bound: whatever the page does (an endless script), the browser is gone at the deadline.
    const killer = setTimeout(() => {
      timedOut = true;
      void browser?.close().catch(() => undefined);
      void proxy.close();
    }, this.config.timeoutMs);
    const onAbort = () => {
      void browser?.close().catch(() => undefined);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const proxyUrl = await proxy.start();
      browser = await chromium.launch({
        executablePath: this.config.chromiumPath,
        headless: true,
        timeout: left(),
        proxy: { server: proxyUrl, bypass: '<-loopback>' },
        args: [
          '--disable-gpu',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-domain-reliability',
          '--disable-sync',
          '--no-pings',
          '--no-first-run',
          ...(this.spkiHashes.length > 0
            ? [`--ignore-certificate-errors-spki-list=${this.spkiHashes.join(',')}`]
            : []),
        ],
      });
      const version = browser.version();
      const userAgent = `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${version} Safari/537.36 ${this.options.userAgentProduct}`;
      const harPath = path.join(dir, 'capture.har');
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
      const session = await this.browse(context, url, navigations, { pageDeadline, left }).catch(
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
      if (timedOut) throw timeoutError(this.config.timeoutMs);
      if (proxy.overLimit)
        throw new AppError('PAYLOAD_TOO_LARGE', 'The page exceeds the 250 MB archive bound');

      const har = JSON.parse(await readFile(harPath, 'utf8')) as { log: { entries: HarEntry[] } };
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
      const waczPath = path.join(dir, 'capture.wacz');
      const wacz = await writeWacz(dir, waczPath, {
        entries: har.log.entries,
        addressOf: (host, port) => proxy.addressOf(host, port),
        page: { url: finalUrl, title, ts: started.toISOString() },
        screenshot,
        pdf,
        record: Buffer.from(JSON.stringify(record, null, 2)),
        software: this.options.software,
        created: finished,
      });
      if (wacz.bytes > LIMITS.maxUploadBytes) {
        throw new AppError('PAYLOAD_TOO_LARGE', 'The page exceeds the 250 MB archive bound');
      }
      return { waczPath, waczBytes: wacz.bytes, screenshot, record, dispose };
    } catch (e) {
      await browser?.close().catch(() => undefined);
      await proxy.close();
      await dispose();
      signal?.throwIfAborted();
      if (e instanceof AppError) throw e;
      if (timedOut) throw timeoutError(this.config.timeoutMs);
      throw new AppError('INTERNAL', 'The capture failed', { cause: e });
    } finally {
      clearTimeout(killer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Opens the page and loads `url` (navigation errors mapped to the route's statuses), waits for `load`,
   * scrolls to the bottom to trigger lazy content and waits for the network to settle, all until
   * `pageDeadline`; what still runs then is cut and recorded as unfinished.
   */
  private async browse(
    context: BrowserContext,
    url: URL,
    navigations: string[],
    time: { pageDeadline: number; left: (until?: number) => number },
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
      throw this.navigationError(e);
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
    const tls = this.certificateOf(session, response, finalUrl).catch(() => null);
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
  private async certificateOf(
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
  private navigationError(e: unknown): AppError {
    const message = e instanceof Error ? e.message : String(e);
    if (/Timeout \d+ms exceeded/.test(message)) return timeoutError(this.config.timeoutMs);
    if (/Download is starting/.test(message)) {
      return new AppError('BAD_REQUEST', 'The URL starts a download, not a page: nothing to capture');
    }
    return new AppError('BAD_GATEWAY', `The site could not be reached: ${netError(message)}`);
  }
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
