import { execFile } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { AddressPolicy, type AllowEntry } from '@notary/platform/net/address-policy';
import { type StageTimes, timed } from '@notary/platform/stage-times';
import { AppError, errorMessage, LIMITS } from '@notary/shared';
import { CAPTURE_SCREENSHOT } from '@notary/shared/limits';
import {
  type Browser,
  type BrowserContext,
  type CDPSession,
  chromium,
  type Page,
  type Request,
} from 'playwright-core';
import {
  type BlockedRequest,
  CAPTURE_FILES,
  CAPTURE_VISIBLE_TEXT_MAX,
  type CapturedTls,
  type CaptureFileSizes,
  type CaptureRecord,
  type CaptureSettingsRecord,
} from '../process-protocol';
import { type DevToolsSession, summaryOf, TlsRecorder, tlsFile } from './provenance';
import { CaptureProxy, type FailedConnection, type RefusedDestination, type Resolver } from './proxy';
import { type HarEntry, missingBodies, writeWarcFiles } from './warc';

/** What the capture adapter is configured with (`CHROMIUM_PATH`, `CAPTURE_*`; see `CaptureSettings`). */
export interface CaptureConfig {
  chromiumPath: string;
  /** The whole capture's bound, launch to archive, in milliseconds (`CAPTURE_TIMEOUT_MS`). */
  timeoutMs: number;
  /** Browsers at once (`CAPTURE_CONCURRENCY`). */
  concurrency: number;
  /** Exceptions to the public-addresses-only rule (`CAPTURE_ALLOW_HOSTS`). */
  allowHosts: AllowEntry[];
  /**
   * PEM of private CA certificates the capture browser trusts as anchors (`CAPTURE_CA_CERTS`: intranets,
   * tests), through a per-capture NSS database.
   */
  caCertsPem: string | undefined;
  /** The public address captures leave from, as the operator declares it (`CAPTURE_EGRESS_IP`); never looked up. */
  egressIp?: string | undefined;
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
/** The page's visible text, as a reader sees it (layout-aware `innerText`), empty without a body. */
const VISIBLE_TEXT_SCRIPT = 'document.body ? document.body.innerText : ""';
/** Scrolling for lazy content: at most this many steps of most of a screen, and at most this long (ms). */
export const SCROLL_MAX_STEPS = 60;
export const SCROLL_MAX_MS = 10_000;
/**
 * Longest pause after each scroll step, ms: it ends sooner, after two rendered frames (by then the step's layout
 * is done, intersection observers and `loading="lazy"` have seen it and started their loads), when the page
 * renders frames at all.
 */
const SCROLL_PAUSE_MS = 150;
/**
 * The network counts as settled once no request has started or ended for this long, ms (counted from the last
 * one, so the quiet that passed during the scroll counts): the gap a page leaves between one load and the next
 * it starts from script (an observer's fetch, then the image its answer names).
 */
const QUIET_MS = 300;
/**
 * Run in the page: scrolls down by most of a screen at a time to the end of the page (as far as the height
 * cap), pausing between steps (two frames, at most `SCROLL_PAUSE_MS`) so lazy content (`loading="lazy"`,
 * intersection observers) starts loading; at
 * the end it waits once more in case the page grew, then goes back to the top. Bounded in steps and time
 * (and from outside by the page phase's deadline).
 */
const SCROLL_SCRIPT = `(async () => {
  const until = Date.now() + ${SCROLL_MAX_MS};
  const pause = () => new Promise((r) => {
    const bound = setTimeout(r, ${SCROLL_PAUSE_MS});
    requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(bound); setTimeout(r, 0); }));
  });
  const end = () => Math.max(0, Math.min(document.documentElement.scrollHeight, ${SCREENSHOT_MAX_HEIGHT}) - window.innerHeight);
  const step = Math.max(200, Math.floor(window.innerHeight * 0.8));
  let y = 0;
  for (let i = 0; i < ${SCROLL_MAX_STEPS} && Date.now() < until; i++) {
    if (y >= end()) {
      await pause();
      if (y >= end()) break;
    }
    y = Math.min(y + step, end());
    window.scrollTo(0, y);
    await pause();
  }
  window.scrollTo(0, 0);
  await pause();
})()`;
/** Share of the time bound given to loading and scrolling; the rest is for screenshot, PDF and archive. */
const PAGE_PHASE_SHARE = 0.55;
/** Longest wait at the end for the certificates of origins still being asked for, ms. */
const TLS_FINISH_MS = 5_000;
/** Longest an NSS database command (`certutil`) may take, ms. */
const CERTUTIL_TIMEOUT_MS = 10_000;

const INSTALL_HINT =
  'Web capture needs Chromium: install it (Debian: apt-get install chromium) or set CHROMIUM_PATH to its executable';

/** What a capture needs beside its configuration: how it names itself, and (tests) a resolver. */
export interface BrowserCaptureOptions {
  userAgentProduct: string;
  software: string;
  /** The service's name and version, for the record and the provenance summary. */
  service?: { name: string; version: string };
  resolve?: Resolver;
  /** Told of each destination refused by address, with what it resolved to (for the operator's log only). */
  onRefusal?: (refused: RefusedDestination) => void;
  /**
   * Each stage's wall time (what the capture waited for its browser and page, navigate and within it load,
   * scroll, quiet, redirects and headers, then screenshot, PDF, HAR and TLS, WARC writing, and browser close as
   * far as it outlasts the writing; and what the browser's start ahead took, as `ahead:` stages), for a bench.
   */
  times?: StageTimes;
  /**
   * Asked once the page is open ahead: whether to warm the rendering up (`warmUpRendering`); default yes. A
   * process whose request is already waiting answers no: the warm-up would then cost the capture more than
   * it saves it.
   */
  warmUp?: () => boolean;
}

export { CAPTURE_FILES };

/** What a finished capture reports: its record, and the size of each part it left (`CAPTURE_FILES`). */
export interface BrowserCaptureResult {
  record: CaptureRecord;
  files: CaptureFileSizes;
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
 * A capture's browser, started before its request: the sandboxed headless Chromium (`launchBrowser`) behind the
 * capture's own `CaptureProxy`, its home a fresh directory in the work directory (`browserHome`: an NSS database
 * trusting `CAPTURE_CA_CERTS`), with its one fresh context and blank page already open and listened to
 * (`openPage`). Made once per capture process (which serves one capture), so no browser state ever passes from
 * one capture to another.
 */
export interface PreparedBrowser {
  browser: Browser;
  proxy: CaptureProxy;
  trustedCas: X509Certificate[];
  opened: OpenedPage;
  /** What starting it took (browser start, new context, page open, rendering warm-up), ms: a bench's figures. */
  took: Record<string, number>;
}

/**
 * Starts a capture's browser and proxy and opens its page (`PreparedBrowser`) in `workDir`, each step bounded by
 * `config.timeoutMs`: the capture process does this as soon as it has its settings, before its request comes,
 * so that Chromium's start (its sandbox, zygote and first renderer) and the page's set-up are no part of the
 * capture's time.
 * @throws AppError SERVICE_UNAVAILABLE when Chromium is missing or does not start (`launchError`), or when
 * `certutil` fails on the private CAs (`browserHome`); the browser's error when its page cannot be opened.
 */
export async function prepareBrowser(
  config: Omit<CaptureConfig, 'concurrency'>,
  options: Pick<BrowserCaptureOptions, 'resolve' | 'onRefusal' | 'userAgentProduct' | 'warmUp'>,
  workDir: string,
): Promise<PreparedBrowser> {
  const began = performance.now();
  await requireChromium(config.chromiumPath);
  const trustedCas = config.caCertsPem ? certificatesOf(config.caCertsPem) : [];
  // A home of its own for the browser: its NSS database holds the private CAs as trust anchors.
  const home = await browserHome(workDir, trustedCas);
  const proxy = new CaptureProxy(new AddressPolicy(config.allowHosts), {
    maxBytes: LIMITS.maxUploadBytes,
    ...(options.resolve ? { resolve: options.resolve } : {}),
    ...(options.onRefusal ? { onRefusal: options.onRefusal } : {}),
  });
  let browser: Browser | undefined;
  try {
    const proxyUrl = await proxy.start();
    const credential = { server: proxyUrl, ...proxy.credential };
    browser = await launchBrowser(config.chromiumPath, home, credential, config.timeoutMs);
    const launched = performance.now();
    const opened = await bounded(openPage(browser, options.userAgentProduct, workDir), config.timeoutMs);
    const blank = performance.now();
    if (options.warmUp?.() ?? true) await warmUpRendering(opened.page, config.timeoutMs);
    const took = {
      'browser start': launched - began,
      ...opened.took,
      'rendering warm-up': performance.now() - blank,
    };
    return { browser, proxy, trustedCas, opened, took };
  } catch (e) {
    await browser?.close().catch(() => undefined);
    await proxy.close();
    throw e;
  }
}

/**
 * A screenshot and a PDF of the blank page, thrown away: Chromium's and Playwright's first of each pays for
 * setting up their paths (raster and encoding, the print layout and its fonts), which the capture's own then
 * does not, about a tenth of a second together. The page is still blank and on no site: nothing of it reaches
 * the capture's record or archive. Failures are ignored (the capture's own screenshot says what is wrong).
 */
async function warmUpRendering(page: Page, timeoutMs: number): Promise<void> {
  await page
    .screenshot({ fullPage: true, timeout: timeoutMs, animations: 'disabled' })
    .catch(() => undefined);
  await bounded(page.pdf({ printBackground: true, format: 'A4' }), timeoutMs).catch(() => undefined);
}

/**
 * One capture in a headless Chromium (playwright-core driving the system's browser), meant to run in the
 * capture process (`capture-process.ts`), never in the service: the browser (`prepareBrowser`, started ahead
 * when `prepared` is given, else here; started again when the one prepared is gone) keeps its sandbox on
 * (`chromiumSandbox: true`; as root Chromium refuses, which is why the capture process runs as another user),
 * inherits only the capture process's minimal environment (its home a fresh directory whose NSS database
 * trusts `CAPTURE_CA_CERTS` as anchors), and reaches the network only through a `CaptureProxy`. One fresh
 * context (no profile, no cookies, downloads refused, service workers blocked, permissions denied, fixed
 * viewport, locale, time zone and a user agent naming the service); the page loaded, scrolled to its end for
 * lazy content (bounded in steps and time) until its requests settle, and recorded (HAR with bodies, the TLS
 * of every origin: `TlsRecorder`), then a full-page screenshot and a PDF rendering; the page's context and the
 * proxy are closed before the capture's parts are written to `workDir` (`CAPTURE_FILES`: WARC, index,
 * screenshot, PDF, every origin's certificates), which the service packs into the archive it signs, and the
 * browser is gone before the capture answers (its shutdown runs beside the writing). The time bound
 * (`config.timeoutMs`) counts from the call, not from the browser's start ahead.
 * @throws AppError as `WebCapturer.capture` documents; `signal`'s reason once it aborts.
 */
export async function captureInBrowser(
  url: URL,
  config: Omit<CaptureConfig, 'concurrency'>,
  options: BrowserCaptureOptions,
  workDir: string,
  signal?: AbortSignal,
  prepared?: Promise<PreparedBrowser>,
): Promise<BrowserCaptureResult> {
  signal?.throwIfAborted();
  const started = new Date();
  const deadline = started.getTime() + config.timeoutMs;
  const time: PageTime = {
    pageDeadline: started.getTime() + config.timeoutMs * PAGE_PHASE_SHARE,
    left: (until = deadline) => Math.max(1, until - Date.now()),
  };
  const run: { ready: PreparedBrowser | undefined; timedOut: boolean } = {
    ready: undefined,
    timedOut: false,
  };
  const stop = () => {
    void run.ready?.browser.close().catch(() => undefined);
    void run.ready?.proxy.close();
  };
  // The hard bound: whatever the page does (an endless script), the browser is gone at the deadline.
  const killer = setTimeout(() => {
    run.timedOut = true;
    stop();
  }, config.timeoutMs);
  signal?.addEventListener('abort', stop, { once: true });
  try {
    const stageTimes = options.times;
    // What the capture waits for its browser and page: nothing when the ones started ahead are up.
    run.ready = await timed(stageTimes, 'browser start', () =>
      bounded(browserFor(config, options, workDir, prepared), time.left()),
    ).catch((e: unknown) => {
      throw e instanceof AppError ? e : timeoutError(config.timeoutMs);
    });
    if (run.timedOut) throw timeoutError(config.timeoutMs);
    signal?.throwIfAborted();
    for (const [stage, ms] of Object.entries(run.ready.took)) stageTimes?.add(`ahead: ${stage}`, ms);
    const { browser, proxy, trustedCas } = run.ready;
    const shot = await capturePage(run.ready, url, time, { ...config, times: stageTimes });
    // The page is gone and its HAR written (its context closed): nothing reaches the network any more once the
    // proxy is closed, and the browser's own shutdown runs beside the writing of the parts, finished before the
    // capture answers.
    await proxy.close();
    const closing = browser.close();
    if (run.timedOut) throw timeoutError(config.timeoutMs);
    if (proxy.overLimit) throw new AppError('PAYLOAD_TOO_LARGE', 'The page exceeds the 250 MB archive bound');

    const har = JSON.parse(await readFile(shot.harPath, 'utf8')) as { log: { entries: HarEntry[] } };
    await rm(shot.harPath, { force: true });
    const times = { started, finished: new Date() };
    const record = captureRecordOf(url, shot, har.log.entries, proxy, { config, options, trustedCas, times });
    const written = await timed(stageTimes, 'WARC writing', () =>
      writeCaptureFiles(workDir, record, shot, har.log.entries, proxy, options.software),
    );
    // What the browser's shutdown takes beyond the writing.
    await timed(stageTimes, 'browser close', () => closing);
    run.ready = undefined;
    return written;
  } catch (e) {
    await run.ready?.browser.close().catch(() => undefined);
    await run.ready?.proxy.close();
    signal?.throwIfAborted();
    if (e instanceof AppError) throw e;
    if (run.timedOut) throw timeoutError(config.timeoutMs);
    throw new AppError('INTERNAL', 'The capture failed', { cause: e });
  } finally {
    clearTimeout(killer);
    signal?.removeEventListener('abort', stop);
  }
}

/**
 * The capture's browser: the one `prepared` ahead while it and its page are still there (one that crashed while
 * waiting is closed with its proxy and started again), else one started now (`prepareBrowser`).
 */
async function browserFor(
  config: Omit<CaptureConfig, 'concurrency'>,
  options: BrowserCaptureOptions,
  workDir: string,
  prepared: Promise<PreparedBrowser> | undefined,
): Promise<PreparedBrowser> {
  const ready = await prepared;
  if (ready?.browser.isConnected() && !ready.opened.page.isClosed()) return ready;
  if (ready) {
    await ready.browser.close().catch(() => undefined);
    await ready.proxy.close();
  }
  // Started for a capture that waits: no warm-up.
  return prepareBrowser(config, { ...options, warmUp: () => false }, workDir);
}

/** The page phase's bound (epoch ms) and the time left until a bound (the whole capture's by default), ms. */
interface PageTime {
  pageDeadline: number;
  left: (until?: number) => number;
}

/** What the page phase leaves: the browsing, the images, the TLS of every origin and the HAR file's path. */
interface PageShot {
  session: Awaited<ReturnType<typeof browse>>;
  version: string;
  userAgent: string;
  /** The page's height in CSS px, and the screenshot's (cut at `SCREENSHOT_MAX_HEIGHT`). */
  height: number;
  shotHeight: number;
  png: Buffer;
  pdf: Buffer | undefined;
  title: string;
  /** The body's `innerText` (what a reader sees), cut at `CAPTURE_VISIBLE_TEXT_MAX`. */
  visibleText: string;
  visibleTextTruncated: boolean;
  unfinished: string[];
  origins: Awaited<ReturnType<TlsRecorder['finish']>>;
  harPath: string;
}

/** @throws AppError SERVICE_UNAVAILABLE, saying how to install it, when `chromiumPath` is no executable. */
async function requireChromium(chromiumPath: string): Promise<void> {
  try {
    await access(chromiumPath, constants.X_OK);
  } catch {
    throw new AppError('SERVICE_UNAVAILABLE', `${INSTALL_HINT} (not found: ${chromiumPath})`);
  }
}

/**
 * Starts the sandboxed headless Chromium at `chromiumPath`, its traffic through the capture proxy (`proxy`: its URL
 * and this capture's credential), within `timeoutMs`. @throws AppError SERVICE_UNAVAILABLE when it does not start
 * (`launchError`).
 */
function launchBrowser(
  chromiumPath: string,
  home: string,
  proxy: { server: string; username: string; password: string },
  timeoutMs: number,
): Promise<Browser> {
  return chromium
    .launch({
      executablePath: chromiumPath,
      headless: true,
      chromiumSandbox: true,
      // Only what Chromium needs: the capture process's own minimal environment, named explicitly so that
      // nothing else can ever be inherited.
      env: browserEnvironment(home),
      timeout: timeoutMs,
      proxy: { ...proxy, bypass: '<-loopback>' },
      args: [...CHROMIUM_ARGS],
    })
    .catch((e: unknown) => {
      throw launchError(e);
    });
}

/**
 * The page phase in the fresh context and page opened ahead (`prepared.opened`): the page browsed (`browse`; a
 * refused navigation said as such), its full-page screenshot, PDF and title, the requests still running, the
 * TLS of every origin; the context is closed at the end, so the HAR at `harPath` is complete.
 */
async function capturePage(
  prepared: PreparedBrowser,
  url: URL,
  time: PageTime,
  config: Pick<CaptureConfig, 'timeoutMs'> & { times?: StageTimes | undefined },
): Promise<PageShot> {
  const { left } = time;
  const { times } = config;
  const { proxy, opened } = prepared;
  const { context, recorder, version, userAgent, harPath } = opened;
  const session = await timed(times, 'navigate', () =>
    browse(opened, url, time, { timeoutMs: config.timeoutMs, times }),
  ).catch((e: unknown) => {
    throw refusedNavigation(opened.navigations, proxy.blocked, proxy.failed) ?? e;
  });
  const { page } = session;
  const height = await bounded(page.evaluate<number>(PAGE_HEIGHT_SCRIPT), left()).catch(
    () => CAPTURE_VIEWPORT.height,
  );
  const shotHeight = Math.max(1, Math.min(height, SCREENSHOT_MAX_HEIGHT));
  const png = await timed(times, 'screenshot', () =>
    page.screenshot({
      fullPage: true,
      clip: { x: 0, y: 0, width: CAPTURE_VIEWPORT.width, height: shotHeight },
      timeout: left(),
      animations: 'disabled',
    }),
  );
  const pdf = await timed(times, 'PDF', () =>
    bounded(page.pdf({ printBackground: true, format: 'A4' }), left()),
  ).catch(() => undefined);
  const title = await bounded(page.title(), left()).catch(() => '');
  const fullText = await bounded(page.evaluate<string>(VISIBLE_TEXT_SCRIPT), left()).catch(() => '');
  const visibleText = typeof fullText === 'string' ? fullText.slice(0, CAPTURE_VISIBLE_TEXT_MAX) : '';
  const visibleTextTruncated = typeof fullText === 'string' && fullText.length > CAPTURE_VISIBLE_TEXT_MAX;
  const unfinished = [...session.pending].map((r) => r.url());
  const origins = await timed(times, 'HAR and TLS', async () => {
    const finished = await recorder.finish(Math.min(TLS_FINISH_MS, left()));
    await bounded(context.close(), left());
    return finished;
  });
  return {
    session,
    version,
    userAgent,
    height,
    shotHeight,
    png,
    pdf,
    title,
    visibleText,
    visibleTextTruncated,
    unfinished,
    origins,
    harPath,
  };
}

/** The capture's own settings as its record states them (`CaptureRecord.settings`). */
function settingsOf(
  config: Pick<CaptureConfig, 'timeoutMs' | 'allowHosts'>,
  trustedCas: X509Certificate[],
): CaptureSettingsRecord {
  return {
    timeoutMs: config.timeoutMs,
    scroll: { maxSteps: SCROLL_MAX_STEPS, maxMs: SCROLL_MAX_MS },
    screenshotMaxHeight: SCREENSHOT_MAX_HEIGHT,
    allowExceptions: config.allowHosts.length,
    trustedCas: trustedCas.map((c) => ({
      subject: c.subject.replaceAll('\n', ', '),
      sha256Fingerprint: createHash('sha256').update(c.raw).digest('hex'),
    })),
  };
}

/** The capture's record (`capture.json`): the page phase's findings, the proxy's, the settings and times. */
function captureRecordOf(
  url: URL,
  shot: PageShot,
  entries: HarEntry[],
  proxy: CaptureProxy,
  context: {
    config: Omit<CaptureConfig, 'concurrency'>;
    options: BrowserCaptureOptions;
    trustedCas: X509Certificate[];
    times: { started: Date; finished: Date };
  },
): CaptureRecord {
  const { session, origins } = shot;
  const { config, options, times } = context;
  const finalUrl = session.finalUrl;
  const final = new URL(finalUrl);
  return {
    format: 'notary-web-capture/1',
    requestedUrl: url.href,
    finalUrl,
    status: session.status,
    redirects: session.redirects,
    serverIp:
      proxy.addressOf(final.hostname, Number(final.port || (final.protocol === 'https:' ? 443 : 80))) ?? null,
    tls: mainTls(origins.origins.map(summaryOf), finalUrl),
    responseHeaders: session.headers,
    servers: proxy.servers,
    blocked: [...proxy.blocked, ...session.blocked],
    failed: session.failed,
    unfinished: shot.unfinished,
    missingBodies: missingBodies(entries),
    tlsOrigins: origins.origins.map(summaryOf),
    tlsOriginsOmitted: origins.omitted,
    dns: proxy.dns,
    dnsOmitted: proxy.dnsOmitted,
    ...(config.egressIp ? { egressIp: config.egressIp } : {}),
    ...(options.service ? { service: options.service } : {}),
    settings: settingsOf(config, context.trustedCas),
    startedAt: times.started.toISOString(),
    finishedAt: times.finished.toISOString(),
    browser: { name: 'Chromium', version: shot.version },
    userAgent: shot.userAgent,
    locale: CAPTURE_LOCALE,
    timezone: CAPTURE_TIMEZONE,
    viewport: { ...CAPTURE_VIEWPORT },
    screenshot: {
      width: CAPTURE_VIEWPORT.width,
      height: shot.shotHeight,
      truncated: shot.height > shot.shotHeight,
    },
    title: shot.title,
    visibleText: shot.visibleText,
    ...(shot.visibleTextTruncated ? { visibleTextTruncated: true } : {}),
  };
}

/**
 * Writes the capture's parts into `workDir` (`CAPTURE_FILES`): the WARC of the exchanges and its index, the
 * screenshot and the PDF as Chromium rendered them, and every origin's certificates.
 * @throws AppError PAYLOAD_TOO_LARGE when the parts together pass the archive bound.
 */
async function writeCaptureFiles(
  workDir: string,
  record: CaptureRecord,
  shot: PageShot,
  entries: HarEntry[],
  proxy: CaptureProxy,
  software: string,
): Promise<BrowserCaptureResult> {
  const { png, origins } = shot;
  const pdf = shot.pdf && shot.pdf.length > 0 ? shot.pdf : undefined;
  const tls = tlsFile(origins.origins, origins.omitted);
  await writeFile(path.join(workDir, CAPTURE_FILES.screenshot), png);
  await writeFile(path.join(workDir, CAPTURE_FILES.tls), tls);
  if (pdf) await writeFile(path.join(workDir, CAPTURE_FILES.pdf), pdf);
  const warc = await writeWarcFiles(workDir, {
    entries,
    addressOf: (host, port) => proxy.addressOf(host, port),
    software,
  });
  const files: CaptureFileSizes = {
    warc: warc.warc,
    index: warc.index,
    screenshot: png.length,
    ...(pdf ? { pdf: pdf.length } : {}),
    tls: tls.length,
  };
  const total = Object.values(files).reduce((sum, n) => sum + n, 0);
  if (total > LIMITS.maxUploadBytes) {
    throw new AppError('PAYLOAD_TOO_LARGE', 'The page exceeds the 250 MB archive bound');
  }
  return { record, files };
}

/**
 * The browser's environment: the capture process's own `PATH` and `TMPDIR` (its work directory), `HOME` the
 * browser's home in it (`browserHome`), a UTF-8 locale and UTC, nothing else.
 */
function browserEnvironment(home: string): Record<string, string> {
  const env: Record<string, string> = { LANG: 'C.UTF-8', TZ: 'UTC', HOME: home };
  for (const name of ['PATH', 'TMPDIR'] as const) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/**
 * Makes the browser's home in `workDir`, fresh for each capture: with private CAs, an NSS database at
 * `.pki/nssdb` (where Chromium on Linux reads the user's trust settings) holding each as a trusted CA for TLS
 * servers (`certutil -t "C,,"`), so a server under such a root is accepted whether it sends its whole chain
 * or only its leaf, and by name and validity as any other.
 * @throws AppError SERVICE_UNAVAILABLE when `certutil` (Debian: libnss3-tools) is missing or fails.
 */
export async function browserHome(workDir: string, cas: X509Certificate[]): Promise<string> {
  // A new one at each call: a browser started again (`browserFor`) never reuses the first one's.
  const home = await mkdtemp(path.join(workDir, 'browser-home-'));
  const db = path.join(home, '.pki', 'nssdb');
  await mkdir(db, { recursive: true, mode: 0o700 });
  if (cas.length === 0) return home;
  const certutil = (args: string[]) =>
    promisify(execFile)('certutil', args, {
      timeout: CERTUTIL_TIMEOUT_MS,
      env: { PATH: process.env.PATH ?? '' },
    });
  try {
    await certutil(['-N', '-d', `sql:${db}`, '--empty-password']);
    for (const [i, ca] of cas.entries()) {
      const file = path.join(workDir, `capture-ca-${i}.pem`);
      await writeFile(file, ca.toString());
      await certutil(['-A', '-d', `sql:${db}`, '-t', 'C,,', '-n', `capture-ca-${i}`, '-i', file]);
    }
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
    throw new AppError(
      'SERVICE_UNAVAILABLE',
      missing
        ? 'Web capture with CAPTURE_CA_CERTS needs certutil: install it (Debian: apt-get install libnss3-tools)'
        : 'Web capture could not trust the CAPTURE_CA_CERTS authorities (certutil failed)',
      { cause: e },
    );
  }
  return home;
}

/** The certificates in `pem` (each `BEGIN CERTIFICATE` block), parsed. */
export function certificatesOf(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => new X509Certificate(b));
}

/** The main document's certificate (`CaptureRecord.tls`): its origin's leaf, when Chromium gave one. */
function mainTls(origins: CaptureRecord['tlsOrigins'], finalUrl: string): CapturedTls | null {
  let origin: string;
  try {
    const u = new URL(finalUrl);
    if (u.protocol !== 'https:') return null;
    origin = u.origin;
  } catch {
    return null;
  }
  const found = origins?.find((o) => o.origin === origin);
  if (!found?.sha256Fingerprint) return null;
  return {
    protocol: found.protocol,
    subject: found.subject,
    issuer: found.issuer,
    validFrom: found.validFrom,
    validTo: found.validTo,
    sha256Fingerprint: found.sha256Fingerprint,
  };
}

/** Playwright's DevTools session as the TLS recorder speaks to it (any method, any event). */
export function devToolsOf(session: CDPSession): DevToolsSession {
  const send = session.send.bind(session) as unknown as (
    method: string,
    params?: Record<string, unknown>,
  ) => Promise<unknown>;
  return {
    send: (method, params) => send(method, params),
    onEvent: (listener) => {
      session.on('event', (e) => listener(e.method, e.params));
    },
  };
}

/** A failed browser start, said so that an operator can act (no sandbox available is the likely one). */
function launchError(e: unknown): AppError {
  const message = errorMessage(e);
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

/**
 * A capture's fresh context and page, opened before its request (`openPage`): the HAR it records into
 * `harPath`, the browser's version and the user agent it presents, the TLS recorder on its DevTools session,
 * and what its listeners keep (main-frame navigations, requests running, failures, blocked loads).
 */
interface OpenedPage {
  context: BrowserContext;
  page: Page;
  harPath: string;
  version: string;
  userAgent: string;
  recorder: TlsRecorder;
  navigations: string[];
  traffic: Traffic;
  failed: Array<{ url: string; reason: string }>;
  blocked: BlockedRequest[];
  /** What opening took (new context, page open), ms. */
  took: Record<string, number>;
}

/**
 * Opens the capture's one context (no profile, no cookies, downloads refused, service workers blocked,
 * permissions denied, fixed viewport, locale, time zone, a user agent naming the service with
 * `userAgentProduct`, the HAR with bodies recorded into `workDir`) and its blank page, listened to
 * (`watchPage`). @throws the browser's error.
 */
async function openPage(browser: Browser, userAgentProduct: string, workDir: string): Promise<OpenedPage> {
  const began = performance.now();
  const version = browser.version();
  const userAgent = `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${version} Safari/537.36 ${userAgentProduct}`;
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
  const contextOpened = performance.now();
  const page: Page = await context.newPage();
  const opened: OpenedPage = {
    context,
    page,
    harPath,
    version,
    userAgent,
    recorder: new TlsRecorder(),
    navigations: [],
    traffic: { pending: new Set(), lastActivity: performance.now() },
    failed: [],
    blocked: [],
    took: {},
  };
  await watchPage(opened);
  opened.took = { 'new context': contextOpened - began, 'page open': performance.now() - contextOpened };
  return opened;
}

/**
 * The listeners of the capture's page: popups closed at once; every origin's TLS from the page's DevTools
 * session and the targets it starts (frames of other processes, workers), with Playwright's view of every
 * response as the fallback; requests running and main-frame navigations; failures, refused local resources and
 * downloads.
 */
async function watchPage(opened: OpenedPage): Promise<void> {
  const { context, page, recorder, traffic, navigations, failed, blocked } = opened;
  const { pending } = traffic;
  // A page the capture did not ask for (a popup) is closed at once.
  context.on('page', (p) => {
    if (p !== page) void p.close().catch(() => undefined);
  });
  await recorder.attach(devToolsOf(await context.newCDPSession(page)));
  context.on('response', (r) => {
    void r.securityDetails().then(
      (d) => recorder.noteResponse(r.url(), d),
      () => recorder.noteResponse(r.url(), null),
    );
  });
  page.on('request', (r) => {
    pending.add(r);
    traffic.lastActivity = performance.now();
    if (r.isNavigationRequest() && r.frame() === page.mainFrame()) navigations.push(r.url());
  });
  page.on('requestfinished', (r) => {
    pending.delete(r);
    traffic.lastActivity = performance.now();
  });
  page.on('requestfailed', (r) => {
    pending.delete(r);
    traffic.lastActivity = performance.now();
    const reason = r.failure()?.errorText ?? 'failed';
    if (/^(file|chrome|about|data|blob):/.test(r.url()) || reason === 'net::ERR_ACCESS_DENIED')
      blocked.push({ url: r.url(), ip: null, reason: `not loaded: ${reason}`, rule: 'local-resource' });
    else failed.push({ url: r.url(), reason });
  });
  page.on('download', (d) => {
    blocked.push({ url: d.url(), ip: null, reason: 'download refused', rule: 'download' });
    void d.cancel().catch(() => undefined);
  });
  // Chromium refuses file:// from a web page itself; it is still recorded when the console says so.
  page.on('console', (m) => {
    const text = m.text();
    const local = /Not allowed to load local resource: (\S+)/.exec(text);
    if (local?.[1])
      blocked.push({ url: local[1], ip: null, reason: 'local resource refused', rule: 'local-resource' });
  });
}

/**
 * Loads `url` in the page opened ahead (navigation errors mapped to the route's statuses), waits for `load`,
 * scrolls to the bottom to trigger lazy content and waits for the network to settle, all until
 * `pageDeadline`; what still runs then is cut and recorded as unfinished.
 */
async function browse(
  opened: OpenedPage,
  url: URL,
  time: PageTime,
  { timeoutMs, times }: { timeoutMs: number; times: StageTimes | undefined },
) {
  const { page, traffic, failed, blocked } = opened;
  const { pending } = traffic;
  let response: Awaited<ReturnType<Page['goto']>>;
  const loadStarted = performance.now();
  traffic.lastActivity = loadStarted;
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
  times?.since('load', loadStarted);
  await timed(times, 'scroll', () =>
    bounded(page.evaluate(SCROLL_SCRIPT), time.left(time.pageDeadline)).catch(() => undefined),
  );
  // What the scrolling started (lazy images, content an observer fetches) is waited for, not a fixed time.
  await timed(times, 'quiet', () => settled(page, traffic, time.pageDeadline));
  const quietEnded = performance.now();

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
  times?.since('redirects and headers', quietEnded);
  return {
    page,
    pending,
    failed,
    blocked,
    redirects,
    headers,
    finalUrl,
    status: response.status(),
  };
}

/** The page's requests running, and when one last started or ended (`performance.now()`). */
interface Traffic {
  pending: Set<Request>;
  lastActivity: number;
}

/**
 * Resolves once no request of the page is running and none has started or ended for `QUIET_MS`, or at
 * `deadline` (epoch ms): `traffic` is kept by the page's own listeners, registered before these, so it is
 * current when they run.
 */
function settled(page: Page, traffic: Traffic, deadline: number): Promise<void> {
  return new Promise((resolve) => {
    let quiet: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(quiet);
      if (traffic.pending.size > 0) return;
      quiet = setTimeout(done, Math.max(0, QUIET_MS - (performance.now() - traffic.lastActivity)));
    };
    const busy = () => clearTimeout(quiet);
    const hard = setTimeout(done, Math.max(0, deadline - Date.now()));
    function done() {
      clearTimeout(quiet);
      clearTimeout(hard);
      page.off('request', busy);
      page.off('requestfinished', arm);
      page.off('requestfailed', arm);
      resolve();
    }
    page.on('request', busy);
    page.on('requestfinished', arm);
    page.on('requestfailed', arm);
    arm();
  });
}

/** Maps a failed navigation to the route's statuses: 400 refused destination, 502 unreachable, 504 time. */
function navigationError(e: unknown, timeoutMs: number): AppError {
  const message = errorMessage(e);
  if (/Timeout \d+ms exceeded/.test(message)) return timeoutError(timeoutMs);
  if (/Download is starting/.test(message)) {
    return new AppError('BAD_REQUEST', 'The URL starts a download, not a page: nothing to capture');
  }
  const reason = netError(message);
  if (reason === 'net::ERR_NAME_NOT_RESOLVED') return nameNotPublic();
  return new AppError('BAD_GATEWAY', `The site could not be reached: ${reason}`);
}

/**
 * The one answer for a name that does not resolve and for a name that resolves only to addresses a capture may not
 * reach: telling them apart would let a caller find which names exist inside the service's network.
 */
function nameNotPublic(): AppError {
  return new AppError(
    'BAD_GATEWAY',
    'The site could not be reached: its name does not resolve to a public address (net::ERR_NAME_NOT_RESOLVED)',
  );
}

/**
 * 400 when the main document's navigation (the URL or a redirect of it) was refused by the proxy: the
 * destination is not allowed; 502 `nameNotPublic` for a name that did not resolve (the proxy's `failed`) and for one
 * refused for the private addresses it resolved to. Undefined when the failure was something else.
 */
function refusedNavigation(
  navigations: string[],
  blocked: BlockedRequest[],
  failed: FailedConnection[],
): AppError | undefined {
  const hosts = new Set(navigations.map((n) => hostPort(n)));
  const refused = blocked.find((b) => hosts.has(hostPort(b.url)));
  if (!refused) {
    // Through the proxy a name that does not resolve reaches Chromium as an empty answer: the proxy says why.
    const unresolved = failed.some((f) => f.stage === 'dns' && hosts.has(`${f.host}:${f.port}`));
    return unresolved ? nameNotPublic() : undefined;
  }
  // A name refused for what it resolved to answers as a name that does not resolve; an address named in the URL
  // tells nothing the caller did not write.
  if (refused.ip === null && refused.rule === 'private-range') return nameNotPublic();
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
