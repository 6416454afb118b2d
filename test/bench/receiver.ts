/**
 * Ingest baseline for `npm run bench` (see `run.ts`): the least a Node process must do to take a
 * multipart upload durably, run as its own process. Any `POST` is parsed with busboy (the service's part sizes:
 * 1 MiB); the first file part is hashed (SHA-256) while it is written to `RECEIVER_DIR/received-<n>.bin`, the
 * file is fsynced and closed (as the service's fs storage does, before its rename), and the answer is `{"sha256": "<hex>"}` (200); anything else is a 400 with the
 * reason. No authentication, database, quota, media type or storage adapter: what the service's upload costs
 * on top of this is the difference. Listens on `HOST`:`PORT` and prints `[receiver] listening on <url>`.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { errorMessage } from '@notary/shared';
import busboy from 'busboy';

const dir = process.env.RECEIVER_DIR ?? '';
const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? '0');
if (!dir) {
  console.error('[receiver] RECEIVER_DIR is required');
  process.exit(1);
}

let count = 0;

/** Hashes and writes the first file part of `req`, fsyncs it; resolves with the hex SHA-256. */
function receive(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const bb = busboy({ headers: req.headers, highWaterMark: 1024 * 1024, fileHwm: 1024 * 1024 });
    let result: Promise<string> | undefined;
    bb.on('file', (_name, stream) => {
      if (result) {
        stream.resume();
        return;
      }
      const hash = createHash('sha256');
      stream.on('data', (chunk: Buffer) => hash.update(chunk));
      // flush: fsync before close; pipeline resolves once the file is closed.
      const file = createWriteStream(path.join(dir, `received-${++count}.bin`), { flush: true });
      result = pipeline(stream, file).then(() => hash.digest('hex'));
    });
    bb.once('error', reject);
    bb.once('close', () => {
      if (result) result.then(resolve, reject);
      else reject(new Error('no file part'));
    });
    req.pipe(bb);
  });
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST') {
    res.writeHead(405).end();
    return;
  }
  receive(req).then(
    (sha256) => {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ sha256 }));
    },
    (e: unknown) => {
      res.writeHead(400, { 'Content-Type': 'text/plain' }).end(errorMessage(e));
    },
  );
});

server.listen(port, host, () => {
  console.log(`[receiver] listening on http://${host}:${port}`);
});

process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
