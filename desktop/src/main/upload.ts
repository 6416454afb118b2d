import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { errorMessage, LIMITS } from '@notary/shared';
import { ClientError, errorFromResponse, offlineError } from '../common/errors';

/** At most one progress event per this many milliseconds (plus the last one). */
const PROGRESS_INTERVAL_MS = 50;
/** Largest error or Document body read back from the server. */
const MAX_RESPONSE_BYTES = 1024 * 1024;

export interface UploadOptions {
  /** `<server>/api/documents/upload`. */
  url: string;
  /** Session JWT (`Authorization: Bearer`). */
  jwt: string;
  filePath: string;
  /** Name the server records (the file's own name). */
  fileName: string;
  /** Bytes of the file handed to the connection so far, and the file size. */
  onProgress?: (loaded: number, total: number) => void;
  signal?: AbortSignal;
  /** Milliseconds, for the progress throttle (`PROGRESS_INTERVAL_MS`); tests inject a clock. */
  now?: () => number;
}

/**
 * Quotes a multipart file name the way browsers do (HTML, "multipart/form-data encoding algorithm"):
 * `"` CR and LF are percent-encoded; everything else, any script, goes as UTF-8.
 */
export function multipartFileName(name: string): string {
  return name.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/**
 * `POST /api/documents/upload` from disk, streaming (memory stays at one chunk): a multipart body with the
 * field `consent=true` first, then `file`, with an exact `Content-Length` so the server can refuse an
 * oversized upload before reading it. Plain `node:http`/`node:https`: it gives real progress (bytes handed
 * to the socket, with backpressure) and a clean abort, which `fetch` with a stream body does not.
 *
 * Resolves with the parsed JSON body of a 2xx answer (the Document).
 * @throws ClientError `too-large` (over 250 MB, checked before sending), `cancelled` (signal), `offline`
 *   (no connection), `file` (unreadable or changed while sent), or the server's error (401, 403, 413, 429...).
 */
export async function uploadFile(options: UploadOptions): Promise<unknown> {
  const { url, jwt, filePath, fileName, onProgress, signal, now = Date.now } = options;
  let size: number;
  try {
    const st = await stat(filePath);
    if (!st.isFile()) throw new Error('not a regular file');
    size = st.size;
  } catch (e) {
    throw new ClientError({ kind: 'file', message: `Cannot read ${filePath}: ${errorMessage(e)}` });
  }
  if (size > LIMITS.maxUploadBytes) {
    throw new ClientError({ kind: 'too-large', message: 'The file exceeds the 250 MB limit', status: 413 });
  }
  if (signal?.aborted) throw new ClientError({ kind: 'cancelled', message: 'Upload cancelled' });

  const boundary = `----NotaryDesktop${randomBytes(16).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="consent"\r\n\r\ntrue\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${multipartFileName(fileName)}"\r\n` +
      'Content-Type: application/octet-stream\r\n\r\n',
    'utf8',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8');
  const target = new URL(url);
  const transport = target.protocol === 'https:' ? https : target.protocol === 'http:' ? http : undefined;
  if (!transport) throw new ClientError({ kind: 'bad-request', message: `Unsupported URL ${url}` });

  return new Promise<unknown>((resolve, reject) => {
    let settled = false;
    let answered = false;
    const file = createReadStream(
      filePath,
      size > 0 ? { start: 0, end: size - 1, highWaterMark: 1 << 20 } : {},
    );
    const req = transport.request(target, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${jwt}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        'content-length': String(head.length + size + tail.length),
        accept: 'application/json',
      },
    });
    const finish = (error: ClientError | null, value?: unknown) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      file.destroy();
      if (error) {
        req.destroy();
        reject(error);
      } else resolve(value);
    };
    const onAbort = () => finish(new ClientError({ kind: 'cancelled', message: 'Upload cancelled' }));
    signal?.addEventListener('abort', onAbort, { once: true });

    req.on('response', (res) => {
      answered = true;
      // An early answer (401, 403, 413...) arrives while we still send: stop reading the file.
      file.unpipe(req);
      file.destroy();
      const chunks: Buffer[] = [];
      let received = 0;
      res.on('data', (chunk: Buffer) => {
        received += chunk.length;
        if (received <= MAX_RESPONSE_BYTES) chunks.push(chunk);
      });
      res.on('error', (e) => finish(offlineError(target.origin, e)));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          onProgress?.(size, size);
          finish(null, body);
        } else {
          const headers = { get: (name: string) => String(res.headers[name.toLowerCase()] ?? '') || null };
          finish(errorFromResponse(status, body, headers));
        }
      });
    });
    req.on('error', (e) => {
      // A reset after the server already answered is the server cutting an early-answered upload short.
      if (answered) return;
      finish(
        signal?.aborted
          ? new ClientError({ kind: 'cancelled', message: 'Upload cancelled' })
          : offlineError(target.origin, e),
      );
    });

    let loaded = 0;
    let lastReport = Number.NEGATIVE_INFINITY;
    file.on('data', (chunk: string | Buffer) => {
      loaded += chunk.length;
      const at = now();
      if (onProgress && at - lastReport >= PROGRESS_INTERVAL_MS) {
        lastReport = at;
        onProgress(loaded, size);
      }
    });
    file.on('error', (e) => {
      if (!answered)
        finish(new ClientError({ kind: 'file', message: `Cannot read ${filePath}: ${e.message}` }));
    });
    file.on('end', () => {
      if (answered || settled) return;
      if (loaded !== size) {
        finish(new ClientError({ kind: 'file', message: `${filePath} changed while it was being sent` }));
        return;
      }
      onProgress?.(loaded, size);
      // A listener may have cancelled from that last report: the request is already destroyed then.
      if (!settled) req.end(tail);
    });
    req.write(head);
    file.pipe(req, { end: false });
  });
}
