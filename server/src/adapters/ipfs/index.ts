import { Readable } from 'node:stream';
import type { IpfsConfig } from '../../config';
import type { IpfsFile, IpfsGateways } from '../../ports/ipfs';
import { BlockSource } from './blocks';
import { parseBareCid } from './cid';
import { decodeFileNode, fileBytes } from './unixfs';

/**
 * The IPFS port over HTTP trustless gateways only: blocks are fetched one request each
 * (`GET <gateway>/ipfs/<cid>?format=raw`, `Accept: application/vnd.ipld.raw`) and verified against their CID
 * here (`BlockSource`), the UnixFS file read from them in order (`fileBytes`). Nothing else is contacted: no
 * libp2p, DHT, bootstrap peers, DNS-based routing or delegated routing; redirects are refused.
 * Why not `@helia/verified-fetch`: see docs/api.md (IPFS import).
 */
export function createIpfsGateways(config: IpfsConfig): IpfsGateways {
  return {
    parseCid: (text) => parseBareCid(text).toString(),
    async fetchFile(text: string, { signal }: { signal: AbortSignal }): Promise<IpfsFile> {
      const cid = parseBareCid(text);
      // Aborted when the stream closes (read to its end, destroyed, failed): no request outlives its reader.
      const done = new AbortController();
      const both = AbortSignal.any([signal, done.signal]);
      const blocks = new BlockSource(config);
      const root = decodeFileNode(cid, await blocks.get(cid, both), cid);
      const stream = Readable.from(fileBytes(blocks, cid, root, both), { objectMode: false });
      stream.once('close', () => done.abort(new Error('IPFS file stream closed')));
      return { size: root.size, stream };
    },
    publicUrl(cid, { fileName, download }) {
      const query = `filename=${encodeURIComponent(fileName)}${download ? '&download=true' : ''}`;
      return `${config.publicGateway}/ipfs/${cid}?${query}`;
    },
  };
}
