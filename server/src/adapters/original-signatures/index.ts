import { readFile } from 'node:fs/promises';
import { BoundedWorkerPool, WorkerBoundError } from '@notary/pdf/bounded-worker';
import { BoundedQueue, QueueFullError } from '@notary/pdf/render-queue';
import { AppError, errorMessage } from '@notary/shared';
import { moduleEntry } from '@notary/shared/module-entry';
import { pemCertificates } from '@notary/trust/bytes';
import type { ReceiptOriginalSignatures } from '@notary/verify/receipt';
import type { OriginalSignatureReader } from '../../ports/original-signatures';
import type { OriginalSignaturesJob } from './signature-reader-worker';

/**
 * Bounds of reading an uploaded PDF's signatures: pdf-lib holds the file and its objects (as the stamping
 * worker, 64 MiB sources at most), and at most 64 CMS of 1 MiB are checked (RSA/ECDSA verifications and chain
 * building take milliseconds each). Plain constants: they protect the process.
 */
export const SIGNATURES_WORKER_MAX_OLD_GENERATION_MB = 256;
export const SIGNATURES_WORKER_MAX_YOUNG_GENERATION_MB = 32;
/** CPU time of one reading, ms; past it the worker is terminated and the signatures reported unreadable. */
export const SIGNATURES_WORKER_DEADLINE_MS = 5_000;
/** Readings at once in this process (each a worker of up to the heap above), and readings that may wait. */
export const SIGNATURES_MAX_CONCURRENT = 2;
export const SIGNATURES_MAX_WAITING = 32;
/** `Retry-After` of a 429 when the readings queue is full, seconds (a reading takes well under a second). */
export const SIGNATURES_RETRY_AFTER_SECONDS = 5;

/** `/ByteRange`, which every signature dictionary has (ISO 32000-1 12.8.1, Table 252). */
const BYTE_RANGE = Buffer.from('/ByteRange');

/**
 * `OriginalSignatureReader` in a `BoundedWorkerPool` (`signature-reader-worker.ts`): one worker kept warm for a
 * minute, each for at most 100 readings and while its heap stays under 96 MB after one; `SIGNATURES_MAX_CONCURRENT`
 * readings at once (so workers, and their memory, stay bounded however many receipts are asked for), up to
 * `SIGNATURES_MAX_WAITING` waiting. A reading past the heap or the deadline, or one that fails otherwise,
 * answers `unreadable` with the reason.
 */
export class BoundedOriginalSignatureReader implements OriginalSignatureReader {
  private readonly pool = new BoundedWorkerPool<OriginalSignaturesJob, ReceiptOriginalSignatures>(
    moduleEntry(import.meta.url, 'signature-reader-worker'),
    {
      maxOldGenerationSizeMb: SIGNATURES_WORKER_MAX_OLD_GENERATION_MB,
      maxYoungGenerationSizeMb: SIGNATURES_WORKER_MAX_YOUNG_GENERATION_MB,
      deadlineMs: SIGNATURES_WORKER_DEADLINE_MS,
    },
    { maxIdle: 1, maxJobsPerWorker: 100, retireHeapBytes: 96 * 1024 * 1024, idleMs: 60_000 },
  );

  private readonly queue = new BoundedQueue(SIGNATURES_MAX_CONCURRENT, SIGNATURES_MAX_WAITING);
  private readonly anchors: Uint8Array[];

  /** `anchors`: DER certificates an original's signer may chain to (`SIGNATURE_TRUST_CERTS`). */
  constructor(anchors: Uint8Array[]) {
    this.anchors = anchors;
  }

  /** `/ByteRange` anywhere in the bytes, in any revision. */
  carriesSignatureDictionary(pdf: Uint8Array): boolean {
    return Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength).indexOf(BYTE_RANGE) !== -1;
  }

  /** @throws AppError RATE_LIMITED (429, `Retry-After`) when the queue is full; `signal`'s reason. */
  async read(
    pdf: Uint8Array,
    options: { at: Date; signal?: AbortSignal },
  ): Promise<ReceiptOriginalSignatures> {
    try {
      return await this.queue.run(
        (signal) => this.pool.run({ pdf, at: options.at, anchors: this.anchors }, signal ? { signal } : {}),
        options.signal,
      );
    } catch (e) {
      options.signal?.throwIfAborted();
      if (e instanceof QueueFullError) {
        throw new AppError('RATE_LIMITED', 'Too many PDFs being read: try again shortly', {
          retryAfterSeconds: SIGNATURES_RETRY_AFTER_SECONDS,
        });
      }
      const why =
        e instanceof WorkerBoundError
          ? `past a bound of the service (${e.bound === 'memory' ? 'memory' : 'time'})`
          : errorMessage(e);
      return { status: 'unreadable', reason: why };
    }
  }
}

/**
 * The reader of the service, its trust anchors read from `trustCertsPath` (PEM; unset: none, chains are
 * reported as not checked against a trust anchor).
 * @throws Error when the file cannot be read or holds no certificate.
 */
export async function createOriginalSignatureReader(
  trustCertsPath: string | undefined,
): Promise<OriginalSignatureReader> {
  if (!trustCertsPath) return new BoundedOriginalSignatureReader([]);
  const anchors = pemCertificates(await readFile(trustCertsPath, 'utf8'));
  if (anchors.length === 0) throw new Error(`SIGNATURE_TRUST_CERTS ${trustCertsPath}: no certificate`);
  return new BoundedOriginalSignatureReader(anchors);
}
