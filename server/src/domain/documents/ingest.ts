import { createHash } from 'node:crypto';
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import type { ObjectStorage } from '../../adapters/storage/port';
import { SNIFF_BYTES } from './mime';

/** Result of streaming a file into storage. */
export interface IngestResult {
  /** Bytes stored. */
  size: number;
  /** Lower-case hex SHA-256 (FIPS 180-4) of exactly the stored bytes. */
  sha256Hash: string;
  /** The first bytes (up to `SNIFF_BYTES`), for media type detection. */
  head: Buffer;
}

/**
 * Passes bytes through unchanged while hashing them, counting them and keeping the head. Memory is
 * bounded by the stream's highWaterMark plus `SNIFF_BYTES`, whatever the file size.
 */
class HashingTap extends Transform {
  private readonly hash = createHash('sha256');
  private readonly headChunks: Buffer[] = [];
  private headLength = 0;
  size = 0;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.hash.update(chunk);
    this.size += chunk.length;
    if (this.headLength < SNIFF_BYTES) {
      const part = chunk.subarray(0, SNIFF_BYTES - this.headLength);
      this.headChunks.push(Buffer.from(part));
      this.headLength += part.length;
    }
    callback(null, chunk);
  }

  digest(): string {
    return this.hash.digest('hex');
  }

  head(): Buffer {
    return Buffer.concat(this.headChunks);
  }
}

/**
 * Streams `source` into `storage` under `key`, computing SHA-256 on the fly (DESIGN.md, main job step 2).
 * If `source` errors or `signal` aborts, the storage adapter removes whatever it wrote, and this rejects.
 */
export async function ingestStream(
  storage: ObjectStorage,
  key: string,
  source: Readable,
  options: { signal: AbortSignal; contentType?: string },
): Promise<IngestResult> {
  const tap = new HashingTap();
  source.on('error', (e) => tap.destroy(e));
  // When storage gives up (abort, error), keep reading the source into the void so the request finishes and
  // the client gets its answer instead of a stalled upload.
  tap.on('close', () => {
    if (!source.readableEnded) {
      source.unpipe(tap);
      source.resume();
    }
  });
  source.pipe(tap);
  await storage.put(key, tap, {
    signal: options.signal,
    ...(options.contentType ? { contentType: options.contentType } : {}),
  });
  return { size: tap.size, sha256Hash: tap.digest(), head: tap.head() };
}
