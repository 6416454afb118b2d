import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CarWriter } from '@ipld/car';
import * as dagPb from '@ipld/dag-pb';
import { errorMessage } from '@notary/shared';
import { MemoryBlockstore } from 'blockstore-core/memory';
import { UnixFS } from 'ipfs-unixfs';
import { type ImporterOptions, importer } from 'ipfs-unixfs-importer';
import { fixedSize } from 'ipfs-unixfs-importer/chunker';
import { balanced } from 'ipfs-unixfs-importer/layout';
import { CID } from 'multiformats/cid';
import { sha256 } from 'multiformats/hashes/sha2';

/**
 * A loopback trustless gateway (IPFS Trustless Gateway spec) over a real IPFS implementation: files are added
 * with `ipfs-unixfs-importer` into a `blockstore-core` MemoryBlockstore and served by node:http as
 * `application/vnd.ipld.raw` blocks (`GET /ipfs/<cid>?format=raw` or `Accept: application/vnd.ipld.raw`) and
 * `application/vnd.ipld.car` DAGs (`?format=car` or the Accept type; CARv1, depth-first, no duplicates).
 * Faults for tests: a block served in place of the real one (`replaceBlock`), HTTP errors for every request
 * (`fault: {status}`), requests held without an answer (`fault: 'stall'`, or `hold` for some blocks only),
 * and crafted DAGs no importer writes (`putBlock`, `putFileNode`: blocks linked over and over, empty parts,
 * huge nodes of tiny files). Started on 127.0.0.1, free port.
 */
export interface IpfsTestGateway {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  blockstore: MemoryBlockstore;
  /** Every request received, in order: the CID text and the format asked for. */
  requests: { cid: string; format: 'raw' | 'car' }[];
  /**
   * `request` (a request arrived; before the fault applies) with its `{cid, format}`; `abandoned` with the same
   * when the client closed a request's connection before its answer was complete (a held one, say).
   */
  events: EventEmitter;
  /** Requests whose connection the client closed before their answer was complete, in order. */
  abandoned: { cid: string; format: 'raw' | 'car' }[];
  /** `undefined`: honest; `{status}`: every request answers it; `'stall'`: no request is ever answered. */
  fault: { status: number } | 'stall' | undefined;
  /** Requests for the blocks it returns true for get no answer (a gateway stalling between blocks). */
  hold: ((cid: string) => boolean) | undefined;
  /** Stores `bytes` as a block of `codec` (CIDv1, sha2-256) and returns its CID. */
  putBlock(bytes: Uint8Array, codec: 'raw' | 'dag-pb'): Promise<CID>;
  /**
   * Stores a UnixFS `file` node (dag-pb, CIDv1) with its own `data` and these links, each declared `size`
   * bytes (`blockSizes`), whatever the blocks linked hold; `name` pads a link (a huge node of a tiny file).
   */
  putFileNode(node: { data?: Uint8Array; links: { cid: CID; size: number; name?: string }[] }): Promise<CID>;
  /** Serves `bytes` whenever the block `cid` is asked for (a lying gateway); `undefined` restores it. */
  replaceBlock(cid: CID, bytes: Uint8Array | undefined): void;
  /** Adds a file (UnixFS, `profile` chunking and layout set explicitly) and returns its root CID. */
  addFile(content: Uint8Array | AsyncIterable<Uint8Array>, profile: ImportProfile): Promise<CID>;
  /** Adds a directory of files (CIDv1) and returns the directory's CID. */
  addDirectory(files: { name: string; content: Uint8Array }[]): Promise<CID>;
  /** The block's bytes as stored. @throws when absent. */
  block(cid: CID): Promise<Uint8Array>;
  close(): Promise<void>;
}

/** How a file is cut into blocks; the same bytes give different CIDs under different profiles. */
export type ImportProfile = 'v1' | 'v0' | 'v1-tiny-chunks';

/**
 * Importer options of each profile, all explicit: `v1` is CIDv1 with raw leaves of 256 KiB under a balanced
 * DAG of 174 links a node (kubo's defaults for CIDv1); `v0` is CIDv0 with dag-pb `file` leaves (kubo's
 * legacy defaults); `v1-tiny-chunks` cuts 1 KiB leaves under 3 links a node, for deep DAGs from small files.
 */
export const IMPORT_PROFILES: Record<ImportProfile, ImporterOptions> = {
  v1: {
    cidVersion: 1,
    rawLeaves: true,
    reduceSingleLeafToSelf: true,
    chunker: fixedSize({ chunkSize: 262_144 }),
    layout: balanced({ maxChildrenPerNode: 174 }),
  },
  v0: {
    cidVersion: 0,
    rawLeaves: false,
    leafType: 'file',
    reduceSingleLeafToSelf: true,
    chunker: fixedSize({ chunkSize: 262_144 }),
    layout: balanced({ maxChildrenPerNode: 174 }),
  },
  'v1-tiny-chunks': {
    cidVersion: 1,
    rawLeaves: true,
    reduceSingleLeafToSelf: true,
    chunker: fixedSize({ chunkSize: 1024 }),
    layout: balanced({ maxChildrenPerNode: 3 }),
  },
};

const RAW = 0x55;
const DAG_PB = 0x70;

/** Starts a gateway; `blockstore` may be shared with another (an honest and a lying gateway of one DAG). */
export async function startIpfsGateway(blockstore = new MemoryBlockstore()): Promise<IpfsTestGateway> {
  const replaced = new Map<string, Uint8Array>();
  const events = new EventEmitter();
  const requests: IpfsTestGateway['requests'] = [];
  const abandoned: IpfsTestGateway['abandoned'] = [];
  // Blocks are found by multihash, as the blockstore keys them: a CIDv0 and its CIDv1 name the same block.
  const keyOf = (cid: CID) => Buffer.from(cid.multihash.bytes).toString('hex');
  const read = async (cid: CID): Promise<Uint8Array> => {
    const swapped = replaced.get(keyOf(cid));
    if (swapped) return swapped;
    const chunks: Uint8Array[] = [];
    for await (const chunk of blockstore.get(cid)) chunks.push(chunk);
    return Buffer.concat(chunks);
  };

  const gateway: IpfsTestGateway = {
    url: '',
    blockstore,
    requests,
    abandoned,
    events,
    fault: undefined,
    hold: undefined,
    async putBlock(bytes, codec) {
      const cid = CID.createV1(codec === 'raw' ? RAW : DAG_PB, await sha256.digest(bytes));
      await blockstore.put(cid, bytes);
      return cid;
    },
    async putFileNode({ data, links }) {
      const unixfs = new UnixFS({ type: 'file', ...(data ? { data } : {}) });
      for (const link of links) unixfs.addBlockSize(BigInt(link.size));
      const block = dagPb.encode(
        dagPb.prepare({
          Data: unixfs.marshal(),
          Links: links.map((l) => ({ Hash: l.cid, Name: l.name ?? '', Tsize: l.size })),
        }),
      );
      return gateway.putBlock(block, 'dag-pb');
    },
    replaceBlock(cid, bytes) {
      if (bytes) replaced.set(keyOf(cid), bytes);
      else replaced.delete(keyOf(cid));
    },
    async addFile(content, profile) {
      let root: CID | undefined;
      for await (const entry of importer([{ content }], blockstore, IMPORT_PROFILES[profile])) {
        root = entry.cid;
      }
      if (!root) throw new Error('importer returned nothing');
      return root;
    },
    async addDirectory(files) {
      let root: CID | undefined;
      const entries = files.map((f) => ({ path: f.name, content: f.content }));
      for await (const entry of importer(entries, blockstore, {
        ...IMPORT_PROFILES.v1,
        wrapWithDirectory: true,
      })) {
        root = entry.cid;
      }
      if (!root) throw new Error('importer returned nothing');
      return root;
    },
    block: read,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server = http.createServer((req, res) => {
    serve(req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(e));
    });
  });

  async function serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const match = /^\/ipfs\/([^/]+)\/?$/.exec(url.pathname);
    let cid: CID;
    try {
      if (!match?.[1]) throw new Error('expected /ipfs/<cid>');
      cid = CID.parse(match[1]);
    } catch (e) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(`invalid path: ${errorMessage(e)}`);
      return;
    }
    const accept = req.headers.accept ?? '';
    const format =
      url.searchParams.get('format') ??
      (accept.includes('application/vnd.ipld.raw')
        ? 'raw'
        : accept.includes('application/vnd.ipld.car')
          ? 'car'
          : undefined);
    if (format !== 'raw' && format !== 'car') {
      // A trustless gateway serves verifiable responses only.
      res.writeHead(406, { 'content-type': 'text/plain' }).end('ask for application/vnd.ipld.raw or .car');
      return;
    }
    const seen = { cid: match?.[1] ?? '', format } as const;
    requests.push(seen);
    res.once('close', () => {
      if (res.writableFinished) return;
      abandoned.push(seen);
      events.emit('abandoned', seen);
    });
    events.emit('request', seen);
    // The socket stays open until the client gives up or close().
    if (gateway.fault === 'stall' || gateway.hold?.(seen.cid)) return;
    if (gateway.fault) {
      res.writeHead(gateway.fault.status, { 'content-type': 'text/plain' }).end('gateway fault');
      return;
    }
    if (!(await blockstore.has(cid)) && !replaced.has(keyOf(cid))) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('block not found');
      return;
    }
    const common = {
      'x-content-type-options': 'nosniff',
      'cache-control': 'public, max-age=29030400, immutable',
      'x-ipfs-roots': cid.toString(),
    };
    if (format === 'raw') {
      const bytes = await read(cid);
      res.writeHead(200, {
        ...common,
        'content-type': 'application/vnd.ipld.raw',
        'content-length': String(bytes.length),
        'content-disposition': `attachment; filename="${cid}.bin"`,
      });
      res.end(bytes);
      return;
    }
    res.writeHead(200, {
      ...common,
      'content-type': 'application/vnd.ipld.car; version=1; order=dfs; dups=n',
      'content-disposition': `attachment; filename="${cid}.car"`,
    });
    const { writer, out } = CarWriter.create([cid]);
    const writing = (async () => {
      const seen = new Set<string>();
      const walk = async (node: CID): Promise<void> => {
        if (seen.has(keyOf(node))) return;
        seen.add(keyOf(node));
        const bytes = await read(node);
        await writer.put({ cid: node, bytes });
        if (node.code === DAG_PB) {
          for (const link of dagPb.decode(bytes).Links) await walk(link.Hash);
        } else if (node.code !== RAW) {
          throw new Error(`codec ${node.code} not served`);
        }
      };
      try {
        await walk(cid);
      } finally {
        await writer.close();
      }
    })();
    for await (const chunk of out) res.write(chunk);
    await writing;
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  gateway.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return gateway;
}

/** A loopback URL where nothing listens (a gateway that is down): a port bound, then released. */
export async function downGatewayUrl(): Promise<string> {
  const probe = http.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** `total` bytes of zeros in 1 MiB chunks, produced as read (a large file that costs no memory). */
export async function* zeros(total: number): AsyncGenerator<Uint8Array> {
  const chunk = new Uint8Array(1024 * 1024);
  for (let left = total; left > 0; left -= chunk.length) {
    yield left >= chunk.length ? chunk : chunk.subarray(0, left);
  }
}
