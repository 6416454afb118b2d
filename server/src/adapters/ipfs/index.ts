import { Readable } from 'node:stream';
import { AppError } from '@notary/shared';
import type { IpfsConfig } from '../../config';
import type { IpfsFile, IpfsGateways } from '../../ports/ipfs';
import { BlockSource } from './blocks';
import { parseBareCid } from './cid';
import type { DagLimits } from './dag';

/**
 * `retryAfterSeconds` of an import refused because as many are running as `IPFS_IMPORT_CONCURRENCY` allows:
 * most imports take seconds, and the client's retry is cheap (refused before any request).
 */
export const IPFS_BUSY_RETRY_AFTER_SECONDS = 10;

/**
 * The IPFS port over HTTP trustless gateways only: blocks are fetched one request each
 * (`GET <gateway>/ipfs/<cid>?format=raw`, `Accept: application/vnd.ipld.raw`) and verified against their CID
 * here (`BlockSource`), the UnixFS file read from them in order (`fileBytes`). Nothing else is contacted: no
 * libp2p, DHT, bootstrap peers, DNS-based routing or delegated routing; redirects are refused.
 * Each file read is bounded as a whole: at most `config.concurrency` at once in this process (one more is
 * RATE_LIMITED), each within `config.importTimeoutMs` (GATEWAY_TIMEOUT), its blocks cached and its blocks and
 * bytes within budgets set from the size its root declares (`limits`, see `DagReader`).
 * Why not `@helia/verified-fetch`: see docs/api.md (IPFS import).
 * @param limits the budgets of one read (default `DAG_LIMITS`; tests use smaller ones).
 */
export function createIpfsGateways(config: IpfsConfig, limits?: DagLimits): IpfsGateways {
  const slots = new ReadSlots(config.concurrency);
  return {
    parseCid: (text) => parseBareCid(text).toString(),
    async fetchFile(text: string, { signal }: { signal: AbortSignal }): Promise<IpfsFile> {
      const cid = parseBareCid(text);
      signal.throwIfAborted();
      const release = slots.take();
      const deadline = new AbortController();
      const timer = setTimeout(
        () =>
          deadline.abort(
            new AppError(
              'GATEWAY_TIMEOUT',
              `Reading ${cid} from the IPFS gateways did not finish within ${config.importTimeoutMs} ms (IPFS_IMPORT_TIMEOUT_MS)`,
            ),
          ),
        config.importTimeoutMs,
      );
      // Aborted when the stream is destroyed (read to its end, failed, or by its reader): no request outlives it.
      const done = new AbortController();
      const all = AbortSignal.any([signal, deadline.signal, done.signal]);
      let stream: Readable | undefined;
      // Whatever ends the read (the caller's abort, the deadline, the stream closing) frees its slot at once,
      // before the requests it cancels have even closed, and fails a stream its reader is still waiting on.
      const end = () => {
        clearTimeout(timer);
        release();
        if (stream && !stream.destroyed) stream.destroy(all.reason);
      };
      all.addEventListener('abort', end, { once: true });
      try {
        // The DAG and UnixFS decoders are loaded at the first import, not held by an idle service.
        const [{ DAG_LIMITS, DagReader }, { fileBytes }] = await Promise.all([
          import('./dag'),
          import('./unixfs'),
        ]);
        const reader = new DagReader(new BlockSource(config), cid, all, limits ?? DAG_LIMITS);
        const root = await reader.readRoot();
        stream = readableOf(fileBytes(reader, root), () => done.abort(new Error('IPFS file stream closed')));
        return { size: root.size, stream };
      } catch (e) {
        end();
        throw e;
      }
    },
    publicUrl(cid, { fileName, download }) {
      const query = `filename=${encodeURIComponent(fileName)}${download ? '&download=true' : ''}`;
      return `${config.publicGateway}/ipfs/${cid}?${query}`;
    },
  };
}

/**
 * A byte stream of `chunks`, pulled as it is read. Unlike `Readable.from`, which waits for the generator to
 * settle before it counts as destroyed (and the generator may be waiting on a block request), destroying it
 * calls `onDestroy` first, so the request is aborted and the generator can return.
 */
function readableOf(chunks: AsyncGenerator<Uint8Array>, onDestroy: () => void): Readable {
  return new Readable({
    read() {
      chunks.next().then(
        (next) => this.push(next.done ? null : next.value),
        (e: unknown) => this.destroy(e instanceof Error ? e : new Error(String(e))),
      );
    },
    destroy(error, callback) {
      onDestroy();
      chunks.return(undefined).then(
        () => callback(error),
        () => callback(error),
      );
    },
  });
}

/** Files read at once in this process, up to `max`; one more is refused rather than queued. */
class ReadSlots {
  private running = 0;

  constructor(private readonly max: number) {}

  /**
   * Takes a slot; the function returned frees it (once, whatever the number of calls).
   * @throws AppError RATE_LIMITED with `retryAfterSeconds` when all `max` are taken.
   */
  take(): () => void {
    if (this.running >= this.max) {
      throw new AppError(
        'RATE_LIMITED',
        `The service is reading as many IPFS files at once as it allows (${this.max}): try again shortly`,
        { retryAfterSeconds: IPFS_BUSY_RETRY_AFTER_SECONDS },
      );
    }
    this.running++;
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      this.running--;
    };
  }
}
