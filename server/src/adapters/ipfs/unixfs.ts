import * as dagPb from '@ipld/dag-pb';
import { AppError, errorMessage } from '@notary/shared';
import { UnixFS } from 'ipfs-unixfs';
import type { CID } from 'multiformats/cid';
import { DAG_PB, RAW } from './cid';
import type { DagReader } from './dag';

/** Blocks requested ahead of the one being read, per level of the DAG: keeps gateways busy, memory bounded. */
const PREFETCH = 4;

/**
 * Deepest DAG read. A balanced UnixFS DAG of 250 MB is 3 levels deep (174 links a node); a trickle DAG a few
 * more. Deeper is a DAG built to exhaust the reader.
 */
const MAX_DEPTH = 32;

/** One block of a UnixFS file (UnixFS spec): its own bytes, then its children's in order. */
export interface FileNode {
  /** Bytes this block holds itself (a raw leaf's whole block; a dag-pb node's `Data.data`). */
  data: Uint8Array;
  /** The blocks that follow, in order, each with the size its parent declares (`blockSizes`). */
  children: { cid: CID; size: number }[];
  /** The bytes of this node's part of the file: `data` plus its children's. */
  size: number;
}

/**
 * Decodes a verified block as part of a UnixFS file: a raw block (codec `raw`) is file bytes; a dag-pb node
 * must carry UnixFS `Data` of type `file` (or the legacy `raw`) with one `blockSizes` entry per link, none 0.
 * @throws AppError BAD_REQUEST for a directory, a symlink, another codec, a link to an empty part, or a
 *   malformed node.
 */
export function decodeFileNode(cid: CID, bytes: Uint8Array, root: CID): FileNode {
  if (cid.code === RAW) return { data: bytes, children: [], size: bytes.length };
  const notAFile = (why: string): AppError =>
    new AppError('BAD_REQUEST', `cid: ${root} does not name a file: ${why}`, { fields: ['cid'] });
  if (cid.code !== DAG_PB) throw notAFile(`block ${cid} is neither dag-pb nor raw`);
  let node: dagPb.PBNode;
  let unixfs: UnixFS;
  try {
    node = dagPb.decode(bytes);
    if (!node.Data) throw new Error('no UnixFS data');
    unixfs = UnixFS.unmarshal(node.Data);
  } catch (e) {
    throw notAFile(`block ${cid} is not a UnixFS node (${errorMessage(e)})`);
  }
  if (unixfs.type === 'directory' || unixfs.type === 'hamt-sharded-directory') {
    throw notAFile('it is a directory (import the CID of a file inside it)');
  }
  if (unixfs.type !== 'file' && unixfs.type !== 'raw') throw notAFile(`it is a UnixFS ${unixfs.type}`);
  if (unixfs.blockSizes.length !== node.Links.length) {
    throw notAFile(`block ${cid} has ${node.Links.length} links but ${unixfs.blockSizes.length} block sizes`);
  }
  // Importers never link an empty part; links to empty parts would let a tiny file take any number of reads.
  const empty = unixfs.blockSizes.indexOf(0n);
  if (empty >= 0) {
    throw notAFile(
      `block ${cid} links a part of 0 bytes (${node.Links[empty]?.Hash}), which no importer writes`,
    );
  }
  return {
    data: unixfs.data ?? new Uint8Array(0),
    children: node.Links.map((link, i) => ({ cid: link.Hash, size: Number(unixfs.blockSizes[i]) })),
    size: Number(unixfs.fileSize()),
  };
}

/**
 * The bytes of the file whose root is `root` (already decoded by `reader.readRoot()`), in order (depth first,
 * a node's own data before its children's, as the UnixFS exporter reads it), every block read through
 * `reader` (verified, cached, counted against the import's budgets) before its bytes are yielded. Each child
 * must be exactly as large as its parent declares, so the total is the root's `size`.
 * @throws AppError BAD_GATEWAY from the gateways; BAD_REQUEST for a block that is not part of a UnixFS file,
 *   a size that disagrees with the parent's, a DAG deeper than `MAX_DEPTH`, or one past the reader's budgets.
 */
export async function* fileBytes(reader: DagReader, root: FileNode): AsyncGenerator<Uint8Array> {
  yield* nodeBytes(reader, root, 0);
}

async function* nodeBytes(reader: DagReader, node: FileNode, depth: number): AsyncGenerator<Uint8Array> {
  if (depth > MAX_DEPTH) {
    throw new AppError('BAD_REQUEST', `cid: ${reader.root} names a DAG deeper than ${MAX_DEPTH} levels`, {
      fields: ['cid'],
    });
  }
  if (node.data.length > 0) yield node.data;
  const pending: Promise<FileNode>[] = [];
  let next = 0;
  const fill = () => {
    while (next < node.children.length && pending.length < PREFETCH) {
      const child = node.children[next++] as FileNode['children'][number];
      const block = reader.node(child.cid);
      // Awaited in turn below; a prefetch left behind by an earlier failure must not be an unhandled rejection.
      block.catch(() => undefined);
      pending.push(block);
    }
  };
  fill();
  for (const child of node.children) {
    const decoded = await (pending.shift() as Promise<FileNode>);
    fill();
    if (decoded.size !== child.size) {
      throw new AppError(
        'BAD_REQUEST',
        `cid: ${reader.root} is not a well-formed UnixFS file: block ${child.cid} holds ${decoded.size} bytes, its parent says ${child.size}`,
        { fields: ['cid'] },
      );
    }
    yield* nodeBytes(reader, decoded, depth + 1);
  }
}
