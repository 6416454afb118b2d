import { parseAllowEntry } from '@notary/platform/net/address-policy';
import { AppError } from '@notary/shared';
import { type CaptureAnswer, captureRequestSchema } from '../process-protocol';
import { captureInBrowser } from './chromium';
import type { RefusedDestination } from './proxy';

/**
 * Entry point of a capture process (started by `IsolatedCapturer`, one per capture): it receives one
 * `CaptureRequest` over IPC, captures in a sandboxed Chromium, writes the archive and screenshot into the work
 * directory it was given, answers once and exits. It runs with a minimal environment as an unprivileged user:
 * it holds no secret of the service and cannot read the service's data, so a page that exploits the browser
 * finds nothing to take. SIGTERM (the service's abort or deadline) closes the browser and exits.
 */
function send(answer: CaptureAnswer): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) return resolve();
    process.send(answer, undefined, {}, () => resolve());
  });
}

const abort = new AbortController();
process.once('SIGTERM', () => abort.abort(new Error('capture stopped by the service')));
// The service went away: nobody will read the result.
process.once('disconnect', () => abort.abort(new Error('the service closed the channel')));

process.once('message', (message: unknown) => {
  void (async () => {
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
      const result = await captureInBrowser(
        new URL(request.url),
        config,
        { ...request.options, onRefusal },
        request.workDir,
        abort.signal,
      );
      answer = { type: 'done', ...result, refusals };
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
    await send(answer);
    process.exit(0);
  })();
});
