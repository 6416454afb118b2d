import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { type Readable, Transform, type TransformCallback, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { StageTimes } from '@notary/platform/stage-times';
import type { ObjectStorage } from '../../ports/storage';
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
 * Asked before a chunk is stored, with the bytes stored so far and the chunk's length: undefined to pass it at
 * once, or a promise the chunk waits for; a rejection stops the intake with its error (the disk guard,
 * `disk-floor.ts`).
 */
export type IngestGate = (stored: number, next: number) => Promise<void> | undefined;

/**
 * Passes bytes through unchanged while hashing them, counting them and keeping the head. Memory is
 * bounded by the stream's highWaterMark plus `SNIFF_BYTES`, whatever the file size. Past `maxBytes` it
 * passes nothing more on and calls `onLimit` once (which aborts the put: the storage adapter then destroys
 * the tap and removes what it wrote, as for any abort); likewise with `gate`'s error when the gate refuses
 * a chunk.
 */
class HashingTap extends Transform {
  private readonly hash = createHash('sha256');
  private readonly headChunks: Buffer[] = [];
  private headLength = 0;
  private over = false;
  size = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly onLimit: (refusal?: unknown) => void,
    private readonly gate?: IngestGate,
    private readonly stages?: StageTimes,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    if (this.over || this.size + chunk.length > this.maxBytes) {
      this.stop(undefined);
      callback();
      return;
    }
    const waiting = this.gate?.(this.size, chunk.length);
    if (!waiting) {
      this.pass(chunk, callback);
      return;
    }
    waiting.then(
      () => (this.over ? callback() : this.pass(chunk, callback)),
      (refusal: unknown) => {
        this.stop(refusal);
        callback();
      },
    );
  }

  private stop(refusal: unknown): void {
    if (this.over) return;
    this.over = true;
    this.onLimit(refusal);
  }

  private pass(chunk: Buffer, callback: TransformCallback): void {
    if (this.stages) {
      const startedAt = performance.now();
      this.hash.update(chunk);
      this.stages.since('hash', startedAt);
    } else {
      this.hash.update(chunk);
    }
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
 * Streams `source` into `storage` under `key`, computing SHA-256 on the fly (memory stays flat whatever the size). If
 * `source` errors, `signal` aborts, the bytes pass `maxBytes` (default: no bound; then it rejects with `tooLarge()`,
 * default a plain Error) or `gate` refuses a chunk (then it rejects with the gate's error), the storage adapter removes
 * whatever it wrote, and this rejects.
 * Either way `source` is read to its end, so the request carrying it completes.
 */
export async function ingestStream(
  storage: ObjectStorage,
  key: string,
  source: Readable,
  options: {
    signal: AbortSignal;
    contentType?: string;
    maxBytes?: number;
    tooLarge?: () => Error;
    gate?: IngestGate | undefined;
    /** Measures `hash` and `store-tail` (last byte passed to the object stored) when given. */
    stages?: StageTimes | undefined;
  },
): Promise<IngestResult> {
  // Past `maxBytes` the put is aborted with `tooLarge()`, the same way as an abort of the caller's `signal`;
  // a chunk `gate` refuses aborts it with the gate's error.
  const limit = new AbortController();
  const tap = new HashingTap(
    options.maxBytes ?? Number.POSITIVE_INFINITY,
    (refusal) =>
      limit.abort(refusal ?? options.tooLarge?.() ?? new Error(`More than ${options.maxBytes} bytes`)),
    options.gate,
    options.stages,
  );
  let lastByteAt = 0;
  if (options.stages) tap.once('end', () => (lastByteAt = performance.now()));
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
    signal: AbortSignal.any([options.signal, limit.signal]),
    ...(options.contentType ? { contentType: options.contentType } : {}),
  });
  if (options.stages && lastByteAt > 0) options.stages.since('store-tail', lastByteAt);
  return { size: tap.size, sha256Hash: tap.digest(), head: tap.head() };
}

/**
 * Reads `source` to its end without keeping it (a reference-only intake, e.g. an IPFS import, Rule 1):
 * the size, SHA-256 and head as `ingestStream` computes them, memory flat whatever the size. Past
 * `maxBytes` (default: no bound) `source` is destroyed at once with `tooLarge()` (default a plain Error) and
 * this rejects with it; if `source` errors, this rejects with its error.
 */
export async function hashStream(
  source: Readable,
  options: { maxBytes?: number; tooLarge?: () => Error } = {},
): Promise<IngestResult> {
  let limitError: Error | undefined;
  const tap = new HashingTap(options.maxBytes ?? Number.POSITIVE_INFINITY, () => {
    limitError = options.tooLarge?.() ?? new Error(`More than ${options.maxBytes} bytes`);
    tap.destroy(limitError);
  });
  const discard = new Writable({ write: (_chunk, _encoding, callback) => callback() });
  try {
    await pipeline(source, tap, discard);
  } catch (e) {
    throw limitError ?? e;
  }
  return { size: tap.size, sha256Hash: tap.digest(), head: tap.head() };
}
