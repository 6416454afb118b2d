import { Readable } from 'node:stream';
import { AppError } from '@notary/shared';
import type { IpfsConfig } from '../../config';
import type { IpfsFile, IpfsGateways, IpfsReadOptions } from '../../ports/ipfs';
import { BlockSource } from './blocks';
import { parseBareCid } from './cid';
import type { DagLimits } from './dag';
import { createIpfsReadQueues } from './read-queues';

export { IPFS_BUSY_RETRY_AFTER_SECONDS } from './read-queues';

/**
 * The IPFS port over HTTP trustless gateways only: blocks are fetched one request each
 * (`GET <gateway>/ipfs/<cid>?format=raw`, `Accept: application/vnd.ipld.raw`) and verified against their CID
 * here (`BlockSource`), the UnixFS file read from them in order (`fileBytes`). Nothing else is contacted: no
 * libp2p, DHT, bootstrap peers, DNS-based routing or delegated routing; redirects are refused.
 * Each file read is bounded as a whole: it takes a place in the read queue of its use, shared fairly across
 * tenants (`createIpfsReadQueues`: at most `config.concurrency` imports at once in this process, as many
 * waiting, one more RATE_LIMITED), each within `config.importTimeoutMs` from its start (GATEWAY_TIMEOUT), its
 * blocks cached and its blocks and bytes within budgets set from the size its root declares (`limits`, see
 * `DagReader`).
 * Why not `@helia/verified-fetch`: see docs/api.md (IPFS import).
 * @param limits the budgets of one read (default `DAG_LIMITS`; tests use smaller ones).
 */
export function createIpfsGateways(config: IpfsConfig, limits?: DagLimits): IpfsGateways {
  const queues = createIpfsReadQueues(config.concurrency);
  return {
    queues,
    parseCid: (text) => parseBareCid(text).toString(),
    async fetchFile(text: string, { signal, key, use }: IpfsReadOptions): Promise<IpfsFile> {
      const cid = parseBareCid(text);
      signal.throwIfAborted();
      // Waiting for its turn (no request yet), then the read's own deadline starts.
      const release = await queues[use ?? 'import'].acquire(key ?? '', signal);
      if (signal.aborted) {
        release();
        throw signal.reason;
      }
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
