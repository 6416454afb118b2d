import path from 'node:path';
import { parseAllowEntry } from '@notary/platform/net/address-policy';
import { StageTimes } from '@notary/platform/stage-times';
import { AppError } from '@notary/shared';
import { MAX_REQUEST_BYTES, readJsonLine, signalReady, writeAnswer } from '../process-pipes';
import { type CaptureAnswer, captureRequestSchema, captureSetupSchema } from '../process-protocol';
import { type CaptureConfig, captureInBrowser, type PreparedBrowser, prepareBrowser } from './chromium';
import type { RefusedDestination } from './proxy';
import { warmUpWarcWriting } from './warc';

/**
 * Entry point of a capture process (started by `IsolatedCapturer`, one per capture, possibly ahead of it): it
 * reads its setup (`CaptureSetup`: work directory and settings) on stdin (`process-pipes.ts`), starts its
 * sandboxed Chromium behind its capture proxy and opens its page at once (`prepareBrowser`), warms its archive
 * writer meanwhile (`warmUpWarcWriting`), says it is ready once both are done (`signalReady`; at once when the
 * setup is refused, or once the browser failed to start: the request then gets the error), then reads one
 * `CaptureRequest`, captures, writes the capture's parts (`CAPTURE_FILES`: WARC, index, screenshot, PDF, TLS
 * material) into its work directory, answers once on its answer pipe with the record and the parts' sizes, and
 * exits; the service packs and signs the archive. It runs with a minimal environment as an
 * unprivileged user: it holds no secret of the service and cannot read the service's data, so a page that
 * exploits the browser finds nothing to take. SIGTERM (the service's abort or deadline) closes the browser and
 * exits.
 */
const abort = new AbortController();
/** The process's setup once read, and whether its request came (after which the capture handles SIGTERM). */
let setup: Setup | Error | undefined;
let requested = false;
process.once('SIGTERM', () => {
  abort.abort(new Error('capture stopped by the service'));
  if (!requested) void exitUnused();
});
const refusals: RefusedDestination[] = [];
const onRefusal = (r: RefusedDestination) => {
  if (refusals.length < 1_000) refusals.push(r);
};

readJsonLine(process.stdin, MAX_REQUEST_BYTES)
  .then(
    (message) => {
      const ready = setUp(message);
      setup = ready;
      // Ready once the browser is up, or once it failed (the request's answer says why).
      if (ready instanceof Error) signalReady();
      else void ready.prepared.then(signalReady, signalReady);
      return readJsonLine(process.stdin, MAX_REQUEST_BYTES).then((request) => {
        requested = true;
        // The service went away (it keeps stdin open while it waits): nobody will read the result.
        const gone = () => abort.abort(new Error('the service closed the channel'));
        if (process.stdin.readableEnded) gone();
        else process.stdin.once('end', gone);
        process.stdin.resume();
        void answerRequest(ready, request);
      });
    },
    () => process.exit(1),
  )
  .catch(() => exitUnused());

/**
 * Ends a process that got no request (the service discards it, or is gone: its stdin ended): the browser
 * started ahead is closed first, so that nothing of it outlives the process and its work directory.
 */
async function exitUnused(): Promise<never> {
  const ready = setup instanceof Error ? undefined : await setup?.prepared.catch(() => undefined);
  await ready?.browser.close().catch(() => undefined);
  await ready?.proxy.close();
  process.exit(1);
}

/** The process's setup, its browser starting (`prepareBrowser`); the error when the setup is not one. */
interface Setup {
  workDir: string;
  userAgentProduct: string;
  config: Omit<CaptureConfig, 'concurrency'>;
  prepared: Promise<PreparedBrowser>;
}

/** Reads the setup in `message` and starts the browser and the warm-up it allows (`Setup`). */
function setUp(message: unknown): Setup | Error {
  try {
    const { workDir, userAgentProduct, config } = captureSetupSchema.parse(message);
    const browserConfig = {
      chromiumPath: config.chromiumPath,
      timeoutMs: config.timeoutMs,
      allowHosts: config.allowHosts.map(parseAllowEntry),
      caCertsPem: config.caCertsPem,
      egressIp: config.egressIp,
    };
    // The archive writer is warmed beside the browser's start: both are done before the process says it is ready.
    const warming = warmUpWarcWriting(path.join(workDir, 'warm-up')).catch(() => undefined);
    // Rendering is warmed up only while no request waits (a process started ahead, not for a capture at once).
    const warmUp = () => !requested;
    const browser = prepareBrowser(browserConfig, { onRefusal, userAgentProduct, warmUp }, workDir);
    const prepared = Promise.all([browser, warming]).then(([ready]) => ready);
    return { workDir, userAgentProduct, config: browserConfig, prepared };
  } catch (e) {
    return e instanceof Error ? e : new Error(String(e));
  }
}

/** Captures what `message` asks with the browser of `ready`, answers on the answer pipe and exits. */
async function answerRequest(ready: Setup | Error, message: unknown): Promise<void> {
  let answer: CaptureAnswer;
  try {
    if (ready instanceof Error) throw ready;
    const request = captureRequestSchema.parse(message);
    const { timing, ...options } = request.options;
    const times = timing ? new StageTimes() : undefined;
    const result = await captureInBrowser(
      new URL(request.url),
      ready.config,
      { ...options, userAgentProduct: ready.userAgentProduct, onRefusal, ...(times ? { times } : {}) },
      ready.workDir,
      abort.signal,
      ready.prepared,
    );
    answer = { type: 'done', ...result, refusals, ...(times ? { stages: times.entries() } : {}) };
  } catch (e) {
    if (e instanceof AppError) {
      answer = {
        type: 'failed',
        code: e.code,
        message: e.message,
        ...(e.retryAfterSeconds ? { retryAfterSeconds: e.retryAfterSeconds } : {}),
        refusals,
      };
    } else {
      answer = { type: 'failed', code: 'INTERNAL', message: 'The capture failed', refusals };
    }
    // The cause, for the operator: the service copies the capture process's stderr into its log.
    const cause = e instanceof Error && e.cause !== undefined ? e.cause : e;
    process.stderr.write(`${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}\n`);
  }
  await writeAnswer(answer);
  process.exit(0);
}
