import { readFile } from 'node:fs/promises';
import { BoundedWorkerPool, WorkerBoundError } from '@notary/pdf/bounded-worker';
import { pemCertificates } from '@notary/verify';
import type { ReceiptOriginalSignatures } from '@notary/verify/receipt';
import type { OriginalSignatureReader } from '../../ports/original-signatures';
import type { OriginalSignaturesJob } from './worker';

/**
 * Bounds of reading an uploaded PDF's signatures: pdf-lib holds the file and its objects (as the stamping
 * worker, 64 MiB sources at most), and at most 64 CMS of 1 MiB are checked (RSA/ECDSA verifications and chain
 * building take milliseconds each). Plain constants: they protect the process.
 */
export const SIGNATURES_WORKER_MAX_OLD_GENERATION_MB = 256;
export const SIGNATURES_WORKER_MAX_YOUNG_GENERATION_MB = 32;
/** CPU time of one reading, ms; past it the worker is terminated and the signatures reported unreadable. */
export const SIGNATURES_WORKER_DEADLINE_MS = 5_000;

/**
 * `OriginalSignatureReader` in a `BoundedWorkerPool` (`worker.ts`): one worker kept warm for a minute, each
 * for at most 100 readings and while its heap stays under 96 MB after one. A reading past the heap or the
 * deadline, or one that fails otherwise, answers `unreadable` with the reason.
 */
export class BoundedOriginalSignatureReader implements OriginalSignatureReader {
  private readonly pool = new BoundedWorkerPool<OriginalSignaturesJob, ReceiptOriginalSignatures>(
    new URL('./worker.ts', import.meta.url),
    {
      maxOldGenerationSizeMb: SIGNATURES_WORKER_MAX_OLD_GENERATION_MB,
      maxYoungGenerationSizeMb: SIGNATURES_WORKER_MAX_YOUNG_GENERATION_MB,
      deadlineMs: SIGNATURES_WORKER_DEADLINE_MS,
    },
    { maxIdle: 1, maxJobsPerWorker: 100, retireHeapBytes: 96 * 1024 * 1024, idleMs: 60_000 },
  );

  /** `anchors`: DER certificates an original's signer may chain to (`SIGNATURE_TRUST_CERTS`). */
  constructor(private readonly anchors: Uint8Array[]) {}

  async read(
    pdf: Uint8Array,
    options: { at: Date; signal?: AbortSignal },
  ): Promise<ReceiptOriginalSignatures> {
    try {
      return await this.pool.run(
        { pdf, at: options.at, anchors: this.anchors },
        options.signal ? { signal: options.signal } : {},
      );
    } catch (e) {
      options.signal?.throwIfAborted();
      const why =
        e instanceof WorkerBoundError
          ? `past a bound of the service (${e.bound === 'memory' ? 'memory' : 'time'})`
          : e instanceof Error
            ? e.message
            : String(e);
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
