import { open } from 'node:fs/promises';
import { BoundedWorkerPool, WorkerBoundError } from '@notary/pdf/bounded-worker';
import {
  PDF_WORKER_DEADLINE_MS,
  PDF_WORKER_MAX_OLD_GENERATION_MB,
  PDF_WORKER_MAX_YOUNG_GENERATION_MB,
} from '@notary/pdf/bounds';
import { errorMessage } from '@notary/shared';
import { foreign, msg, render } from '@notary/verify/messages/index';
import type { ChainReport } from '@notary/verify/monitor-chain';
import { evidenceOf } from '@notary/verify/report';
import {
  AnchorFileError,
  badAnchor,
  type CertificateCheck,
  type ChainEndpoints,
  type CheckOptions,
  checkAgainstCertificate,
  MAX_ANCHOR_FILE_BYTES,
  MAX_CERTIFICATE_BYTES,
  MAX_CHECKED_FILE_BYTES,
  NETWORK_CHECKS,
  OFFLINE_CHECKS,
  trustAnchors,
  withChecks,
} from '../common/certificate-check';
import { ClientError } from '../common/errors';
import type { ReceiptJob, ReceiptJobOutcome } from './certificate-worker';

/**
 * The verify screen's certificate check in Electron main, held to the bounds the service puts on untrusted
 * PDFs (`@notary/pdf/bounds`; a worker's heap limit does not count Buffers, so inflation is capped itself):
 * both files are read to at most their limit (checked while reading, whatever size the file had when it was
 * picked), the certificate is parsed only in a bounded worker thread (`certificate-worker.ts`: heap and CPU
 * deadline, every decoded stream and their total capped), which also runs the offline checks 5 and 6 (they
 * parse the certificate's CMS), and every request to a chain endpoint refuses redirects. One check runs at a
 * time.
 */
export class CertificateChecker {
  private readonly pool: BoundedWorkerPool<ReceiptJob, ReceiptJobOutcome>;
  private queue: Promise<unknown> = Promise.resolve();

  /**
   * @param workerEntry the worker module: `certificate-worker.cjs` beside the bundled main, or the TypeScript
   *   source (`certificate-worker.ts`) when main runs from source (tests).
   * @param fetchFn what requests go through (tests); redirects are refused whatever it does.
   */
  constructor(
    workerEntry: URL,
    private readonly fetchFn: typeof fetch = globalThis.fetch.bind(globalThis),
  ) {
    this.pool = new BoundedWorkerPool(
      workerEntry,
      {
        maxOldGenerationSizeMb: PDF_WORKER_MAX_OLD_GENERATION_MB,
        maxYoungGenerationSizeMb: PDF_WORKER_MAX_YOUNG_GENERATION_MB,
        deadlineMs: PDF_WORKER_DEADLINE_MS,
      },
      // One warm worker for the next check; replaced after 20 checks or when a check left its heap large.
      { maxIdle: 1, maxJobsPerWorker: 20, retireHeapBytes: 96 * 1024 * 1024, idleMs: 60_000 },
    );
  }

  /**
   * Checks 1 to 6 of the file at `filePath` against the certificate at `certificatePath` (see
   * `checkAgainstCertificate`): 1 to 4 here, 5 and 6 in the worker, chained to the anchors of `options.trust`,
   * whose picked files `fileOf` names (each read to at most `MAX_ANCHOR_FILE_BYTES`), and judged at
   * `options.at`. A certificate past a bound is
   * reported as `no-receipt` with the bound named; an anchor file that cannot serve as `bad-anchor`.
   * @throws ClientError `too-large` when a file passes its limit, `file` when it cannot be read; whatever
   *   `fileOf` throws for an unknown id.
   */
  check(
    filePath: string,
    certificatePath: string,
    endpoints: ChainEndpoints,
    options: CheckOptions = { trust: { kind: 'none' }, at: null },
    fileOf: (id: string) => { name: string; path: string } = unknownFile,
  ): Promise<CertificateCheck> {
    const run = this.queue.then(() => this.run(filePath, certificatePath, endpoints, options, fileOf));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * The run chain of the certidão de permanência at `filePath` (`monitor-chain.json`), checked as
   * `notary-verify chain` does, parsed only in the bounded worker; `unreadable` says why there is none (not a
   * certidão, or past a bound).
   * @throws ClientError `too-large` past `MAX_CERTIFICATE_BYTES`, `file` when it cannot be read.
   */
  checkChain(filePath: string): Promise<ChainReport> {
    const run = this.queue.then(async (): Promise<ChainReport> => {
      const read = await readFileAtMost(filePath, MAX_CERTIFICATE_BYTES);
      try {
        const outcome = await this.pool.run(
          { certificate: read, chain: true },
          { transfer: [read.buffer as ArrayBuffer] },
        );
        if (outcome.kind === 'chain') return outcome.report;
        return { chain: undefined, breaks: [], unreadable: 'no chain read' };
      } catch (e) {
        if (e instanceof WorkerBoundError) {
          return { chain: undefined, breaks: [], unreadable: `not a readable PDF: it ${e.message}` };
        }
        throw e;
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Ends the workers. */
  close(): Promise<void> {
    return this.pool.close();
  }

  private async run(
    filePath: string,
    certificatePath: string,
    endpoints: ChainEndpoints,
    { trust, at }: CheckOptions,
    fileOf: (id: string) => { name: string; path: string },
  ): Promise<CertificateCheck> {
    let anchors: Uint8Array[] | null;
    try {
      anchors = await trustAnchors(trust, (id) => readAnchorFile(fileOf(id)));
    } catch (e) {
      if (e instanceof AnchorFileError) return badAnchor(e);
      throw e;
    }
    const file = await readFileAtMost(filePath, MAX_CHECKED_FILE_BYTES);
    const read = await readFileAtMost(certificatePath, MAX_CERTIFICATE_BYTES);
    let outcome: ReceiptJobOutcome;
    try {
      // Both buffers move to the worker and come back with the answer (no copy of up to 250 MB).
      outcome = await this.pool.run(
        { certificate: read, offline: { file, anchors, at } },
        { transfer: [read.buffer as ArrayBuffer, file.buffer as ArrayBuffer] },
      );
    } catch (e) {
      if (e instanceof WorkerBoundError) {
        return { kind: 'no-receipt', message: `the certificate is not a readable PDF: it ${e.message}` };
      }
      throw e;
    }
    if (outcome.kind !== 'receipt') {
      return { kind: 'no-receipt', message: outcome.kind === 'none' ? outcome.message : 'no receipt read' };
    }
    const result = await checkAgainstCertificate(outcome.file ?? file, outcome.certificate, endpoints, {
      fetch: withoutRedirects(this.fetchFn),
      attachedReceipt: outcome.receipt,
      checks: NETWORK_CHECKS,
    });
    if (result.kind !== 'report') return result;
    const offline = outcome.offline ?? { error: 'not run' };
    return {
      kind: 'report',
      report: withChecks(
        result.report,
        'checks' in offline
          ? offline.checks
          : OFFLINE_CHECKS.map((id) => {
              // The worker's own error text, shown as it is in every language.
              const summary = msg('report.failed', { problems: [foreign(offline.error)] });
              return {
                id,
                name: result.report.checks.find((c) => c.id === id)?.name ?? `check ${id}`,
                status: 'failed' as const,
                summary: render(summary, 'en'),
                summaryMessage: summary,
                evidence: [evidenceOf(msg('file.certificate'), foreign(offline.error), undefined, false)],
              };
            }),
      ),
    };
  }
}

function unknownFile(id: string): never {
  throw new ClientError({ kind: 'not-found', message: `Unknown file ${id}: pick it again` });
}

/** A picked anchor file, read to at most `MAX_ANCHOR_FILE_BYTES`. @throws AnchorFileError past it. */
async function readAnchorFile(file: {
  name: string;
  path: string;
}): Promise<{ name: string; bytes: Uint8Array }> {
  try {
    return { name: file.name, bytes: await readFileAtMost(file.path, MAX_ANCHOR_FILE_BYTES) };
  } catch (e) {
    if (e instanceof ClientError && e.kind === 'too-large') throw new AnchorFileError(file.name, 'too-large');
    throw e;
  }
}

/**
 * `fetchFn` with every redirect refused (`redirect: 'error'`, whatever the caller asked): a chain endpoint the
 * user chose answers itself, or the request fails.
 */
export function withoutRedirects(fetchFn: typeof fetch): typeof fetch {
  return (input, init) => fetchFn(input, { ...init, redirect: 'error' });
}

/**
 * The bytes of the file at `filePath`, read to at most `max` bytes: its size when opened is read into a buffer
 * of exactly that size (which the result owns: it can be moved to a worker), then reading goes on until the end
 * of the file, so a file that grew since it was picked is read whole or, past `max`, refused.
 * @throws ClientError `too-large` past `max`; `file` when it cannot be opened or read.
 */
export async function readFileAtMost(filePath: string, max: number): Promise<Uint8Array> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(filePath, 'r');
    const size = (await handle.stat()).size;
    if (size > max) throw tooLarge();
    const head = new Uint8Array(size);
    let length = 0;
    while (length < size) {
      const { bytesRead } = await handle.read(head, length, size - length, length);
      if (bytesRead === 0) return head.slice(0, length); // it shrank meanwhile
      length += bytesRead;
    }
    // Whatever was appended since: read on, in chunks, to the end or past the limit.
    const more: Uint8Array[] = [];
    for (;;) {
      const chunk = new Uint8Array(64 * 1024);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > max) throw tooLarge();
      more.push(chunk.subarray(0, bytesRead));
    }
    if (more.length === 0) return head;
    const whole = new Uint8Array(length);
    whole.set(head);
    let at = size;
    for (const c of more) {
      whole.set(c, at);
      at += c.length;
    }
    return whole;
  } catch (e) {
    if (e instanceof ClientError) throw e;
    throw new ClientError({ kind: 'file', message: `Cannot read ${filePath}: ${errorMessage(e)}` });
  } finally {
    await handle?.close();
  }
}

function tooLarge(): ClientError {
  return new ClientError({ kind: 'too-large', message: 'The file exceeds the 250 MB limit' });
}
