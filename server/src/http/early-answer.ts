import type { ErrorAnswer } from '@notary/platform/http/errors';
import type { Request, Response } from 'express';
import { errorAnswer } from '../trpc/errors';

/**
 * Bytes of an early-answered request's body read and dropped after the answer, at most, before the
 * connection is closed. Clients that read while they send (curl, Node's fetch) see the answer within the first
 * of them and stop; the rest of a 250 MB upload is never read.
 */
const EARLY_ANSWER_DRAIN_BYTES = 8 * 1024 * 1024;

/** Seconds the same drain may last, at most (a client that keeps the connection open without sending). */
const EARLY_ANSWER_DRAIN_SECONDS = 10;

/**
 * Answers `error` to a request whose body may still be arriving (an upload refused by 401, 403, 413, 429 or
 * 507 before it was read), like nginx's lingering close: the whole answer is written at once with
 * `Connection: close`, the body that follows is read and dropped up to `EARLY_ANSWER_DRAIN_BYTES` (then no
 * longer read: the client's sending stalls), and the response is ended (Node closes the connection after it)
 * when the client has sent all of it, has gone, or after `EARLY_ANSWER_DRAIN_SECONDS`.
 * Closing at once would reset a connection whose unread bytes are still arriving, and a client that had not
 * yet read the answer would see the reset instead; keeping it alive would read all the rest of the body for
 * nothing before the connection could carry another request. A request without a body is answered and
 * closed at once. `body` shapes the answer's body for its face (default: the REST error body).
 */
export function answerEarly(
  req: Request,
  res: Response,
  error: unknown,
  body: (answer: ErrorAnswer) => unknown = (answer) => answer.body,
): void {
  const answer = errorAnswer(res, error);
  const text = JSON.stringify(body(answer));
  res.writeHead(answer.status, {
    ...answer.headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
    Connection: 'close',
  });
  const bodyless =
    req.readableEnded ||
    (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined);
  if (bodyless) {
    res.end(text);
    return;
  }
  res.write(text);
  // The answer's bytes are complete on the wire; ending the response is what closes the connection.
  let drained = 0;
  const end = () => {
    clearTimeout(timer);
    req.off('data', onData).off('end', end).off('close', end);
    if (!res.writableEnded) res.end();
  };
  const onData = (chunk: Buffer) => {
    drained += chunk.length;
    // Enough read: stop reading, so the client's sending stalls, but keep the connection until it goes or the
    // time is up. Closing now, with its bytes still arriving, would reset the connection, and a reset can wipe
    // the answer from a client that had not read it yet.
    if (drained >= EARLY_ANSWER_DRAIN_BYTES) req.pause();
  };
  const timer = setTimeout(end, EARLY_ANSWER_DRAIN_SECONDS * 1000).unref();
  // A parser may have been reading it (a quota passed mid-stream): the body goes nowhere from now on.
  req.unpipe();
  req.on('data', onData).once('end', end).once('close', end);
  req.resume();
}
