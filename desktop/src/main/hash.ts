import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { errorMessage } from '@notary/shared';
import { ClientError } from '../common/errors';

/** Read size of one chunk: large enough for disk throughput, small enough for smooth progress. */
const CHUNK_BYTES = 1024 * 1024;
/** At most one progress event per this many milliseconds (plus the last one). */
const PROGRESS_INTERVAL_MS = 50;

export interface HashOptions {
  /** Bytes read so far and the file size; throttled, and always called once with `loaded === total`. */
  onProgress?: (loaded: number, total: number) => void;
  signal?: AbortSignal;
}

/**
 * SHA-256 of a local file (FIPS 180-4), streaming: memory stays at one chunk whatever the size.
 * Returns 64 lower-case hex characters, the form the service and `sha256sum` print.
 * @throws ClientError `cancelled` when `signal` aborts, `file` when the file cannot be read.
 */
export async function hashFile(filePath: string, options: HashOptions = {}): Promise<string> {
  const { onProgress, signal } = options;
  let total: number;
  try {
    total = (await stat(filePath)).size;
  } catch (e) {
    throw new ClientError({ kind: 'file', message: `Cannot read ${filePath}: ${errorMessage(e)}` });
  }
  const hash = createHash('sha256');
  let loaded = 0;
  let lastReport = 0;
  try {
    const stream = createReadStream(filePath, { highWaterMark: CHUNK_BYTES, ...(signal ? { signal } : {}) });
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      hash.update(chunk);
      loaded += chunk.length;
      const now = Date.now();
      if (onProgress && now - lastReport >= PROGRESS_INTERVAL_MS) {
        lastReport = now;
        onProgress(loaded, Math.max(total, loaded));
      }
    }
  } catch (e) {
    if (signal?.aborted) throw new ClientError({ kind: 'cancelled', message: 'Hashing cancelled' });
    throw new ClientError({ kind: 'file', message: `Cannot read ${filePath}: ${errorMessage(e)}` });
  }
  if (signal?.aborted) throw new ClientError({ kind: 'cancelled', message: 'Hashing cancelled' });
  onProgress?.(loaded, loaded);
  return hash.digest('hex');
}
