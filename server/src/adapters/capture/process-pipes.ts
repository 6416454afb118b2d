import { createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';

/**
 * The channel between the service and a capture process: its setup as one JSON line on its stdin as soon as it
 * is started, `READY_LINE` on the process's stdout once it can take its request with nothing left to wait for (a
 * process may be started ahead of the capture it will serve: its browser is then up), the request as one JSON
 * line on its stdin (kept open while the service waits: its end means the service is gone), the answer as one
 * JSON line on file descriptor `ANSWER_FD`. Pipes rather than Node's IPC channel because the service reads what
 * a process that a page may have taken over sends: IPC would buffer a message of any size before anyone could
 * refuse it; here the service stops reading past `MAX_ANSWER_BYTES`.
 */

/** The capture process's descriptor for its answer (after stdin, stdout and stderr). */
export const ANSWER_FD = 3;

/** What a capture process writes on its stdout once its modules are loaded and it listens for its request. */
export const READY_LINE = 'ready\n';

/** Largest answer read, bytes: a record at its schema's bounds (1,000 refusals, 500 name answers, TLS chains). */
export const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

/** Largest request line the capture process reads, bytes (a URL, the settings, trusted CA certificates). */
export const MAX_REQUEST_BYTES = 4 * 1024 * 1024;

/**
 * The next line of `stream` parsed as JSON (the capture process reading its setup, then its request), read up to
 * `max` bytes; what came after the line is put back for the next read.
 * @throws Error when the stream ends first, the line is longer than `max`, or it is not JSON.
 */
export function readJsonLine(stream: Readable, max: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (error: Error | undefined, line?: Buffer, rest?: Buffer) => {
      stream.off('data', onData).off('end', onEnd).off('error', onError);
      stream.pause();
      if (rest && rest.length > 0) stream.unshift(rest);
      if (error || !line) return reject(error ?? new Error('no request'));
      try {
        resolve(JSON.parse(line.toString('utf8')));
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    };
    const onData = (chunk: Buffer) => {
      const newline = chunk.indexOf(0x0a);
      const part = newline === -1 ? chunk : chunk.subarray(0, newline);
      size += part.length;
      if (size > max) return done(new Error(`the request is larger than ${max} bytes`));
      chunks.push(part);
      if (newline !== -1) done(undefined, Buffer.concat(chunks), chunk.subarray(newline + 1));
    };
    const onEnd = () => done(new Error('the channel ended before the request'));
    const onError = (e: Error) => done(e);
    // Ended already (its end may come with the previous read's line), with nothing put back: no line to read.
    if (stream.readableEnded && stream.readableLength === 0)
      return done(new Error('the channel ended before the request'));
    stream.on('data', onData).once('end', onEnd).once('error', onError);
    // Paused by the previous read (with what followed its line put back): read on.
    stream.resume();
  });
}

/** Says `READY_LINE` on stdout (the capture process, listening for its request). */
export function signalReady(): void {
  // A service that stopped reading it is no reason to fail the capture.
  process.stdout.once('error', () => undefined);
  process.stdout.write(READY_LINE);
}

/** Writes `answer` as one JSON line on `ANSWER_FD` (the capture process answering) and resolves once it is out. */
export function writeAnswer(answer: unknown): Promise<void> {
  return new Promise((resolve) => {
    const out = createWriteStream('', { fd: ANSWER_FD });
    out.once('error', () => resolve());
    out.end(`${JSON.stringify(answer)}\n`, () => resolve());
  });
}

/**
 * Collects what the capture process writes on its answer pipe, up to `MAX_ANSWER_BYTES`: `text()` is the first
 * line, `overflow` says the process wrote more (it is then stopped by `onOverflow`, its answer invalid).
 */
export function collectAnswer(
  pipe: Readable,
  onOverflow: () => void,
): { text: () => string | undefined; readonly overflow: boolean } {
  const chunks: Buffer[] = [];
  let size = 0;
  let overflow = false;
  pipe.on('data', (chunk: Buffer) => {
    if (overflow) return;
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      overflow = true;
      chunks.length = 0;
      pipe.destroy();
      onOverflow();
      return;
    }
    chunks.push(chunk);
  });
  pipe.on('error', () => undefined);
  return {
    text: () => {
      if (overflow || chunks.length === 0) return undefined;
      const all = Buffer.concat(chunks).toString('utf8');
      const newline = all.indexOf('\n');
      return newline === -1 ? undefined : all.slice(0, newline);
    },
    get overflow() {
      return overflow;
    },
  };
}
