import { parseAllowEntry } from '@notary/platform/net/address-policy';
import { StageTimes } from '@notary/platform/stage-times';
import { AppError } from '@notary/shared';
import { MAX_REQUEST_BYTES, readJsonLine, signalReady, writeAnswer } from '../process-pipes';
import { type CaptureAnswer, captureRequestSchema } from '../process-protocol';
import { captureInBrowser } from './chromium';
import type { RefusedDestination } from './proxy';

/**
 * Entry point of a capture process (started by `IsolatedCapturer`, one per capture, possibly ahead of it): once
 * its modules are loaded it says it is ready (`signalReady`), then it reads one
 * `CaptureRequest` on stdin (`process-pipes.ts`), captures in a sandboxed Chromium, writes the capture's parts
 * (`CAPTURE_FILES`: WARC, index, screenshot, PDF, TLS material) into the work directory it was given, answers
 * once on its answer pipe with the record and the parts' sizes, and exits; the service packs and signs the
 * archive. It runs with a minimal environment as an unprivileged user:
 * it holds no secret of the service and cannot read the service's data, so a page that exploits the browser
 * finds nothing to take. SIGTERM (the service's abort or deadline) closes the browser and exits.
 */
const abort = new AbortController();
process.once('SIGTERM', () => abort.abort(new Error('capture stopped by the service')));

readJsonLine(process.stdin, MAX_REQUEST_BYTES).then(
  (message) => {
    // The service went away (it keeps stdin open while it waits): nobody will read the result.
    process.stdin.once('end', () => abort.abort(new Error('the service closed the channel')));
    process.stdin.resume();
    void answerRequest(message);
  },
  () => process.exit(1),
);
// Every module is loaded by now (static imports): what is left of a capture is the capture itself.
signalReady();

/** Captures what `message` asks, answers on the answer pipe and exits. */
async function answerRequest(message: unknown): Promise<void> {
  let answer: CaptureAnswer;
  const refusals: RefusedDestination[] = [];
  const onRefusal = (r: RefusedDestination) => {
    if (refusals.length < 1_000) refusals.push(r);
  };
  try {
    const request = captureRequestSchema.parse(message);
    const config = {
      chromiumPath: request.config.chromiumPath,
      timeoutMs: request.config.timeoutMs,
      allowHosts: request.config.allowHosts.map(parseAllowEntry),
      caCertsPem: request.config.caCertsPem,
      egressIp: request.config.egressIp,
    };
    const { timing, ...options } = request.options;
    const times = timing ? new StageTimes() : undefined;
    const result = await captureInBrowser(
      new URL(request.url),
      config,
      { ...options, onRefusal, ...(times ? { times } : {}) },
      request.workDir,
      abort.signal,
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
