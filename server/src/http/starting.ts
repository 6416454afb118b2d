import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorBody } from '@notary/shared';

/** Seconds a client is told to wait while the service starts (a cold start takes a few seconds). */
const STARTING_RETRY_AFTER_SECONDS = 2;

/**
 * The answer to every request that arrives before the service is ready (database migrated, adapters and
 * anchoring started): `GET /health` 503 `{status:"starting"}`, anything else 503
 * `{message, code:"SERVICE_UNAVAILABLE", retryAfterSeconds}`, both with `Retry-After`. A request body is
 * read and dropped first so that a client still sending gets the answer, not a broken pipe.
 */
export function answerWhileStarting(req: IncomingMessage, res: ServerResponse): void {
  const answer = () => {
    const isHealth = (req.url ?? '').split('?')[0] === '/health';
    const body: ErrorBody | { status: 'starting' } = isHealth
      ? { status: 'starting' }
      : {
          message: 'The service is starting: try again in a moment',
          code: 'SERVICE_UNAVAILABLE',
          retryAfterSeconds: STARTING_RETRY_AFTER_SECONDS,
        };
    res.writeHead(503, {
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'no-store',
      'Retry-After': String(STARTING_RETRY_AFTER_SECONDS),
      Connection: 'close',
    });
    res.end(JSON.stringify(body));
  };
  if (req.readableEnded) answer();
  else {
    req.once('end', answer);
    req.once('error', () => res.destroy());
    req.resume();
  }
}
