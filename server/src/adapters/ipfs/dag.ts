import { AppError } from '@notary/shared';
import type { CID } from 'multiformats/cid';
import { type BlockSource, MAX_BLOCK_BYTES } from './blocks';
import { decodeFileNode, type FileNode } from './unixfs';

const MiB = 1024 * 1024;

/**
 * What one import may cost, whatever DAG a CID names. A published DAG is anyone's input: the same block may be
 * linked thousands of times, and nodes may be huge while the file they declare is tiny. The budgets are set
 * from the file size the UnixFS root declares, so an honest DAG of any layout fits them with room to spare.
 */
export interface DagLimits {
  /** Bytes of blocks one import may fetch per byte of the declared file size (honest DAGs: about 1.0 to 1.1). */
  bytesPerFileByte: number;
  /** Bytes of blocks fetched beyond that, for the root and small files' headers. */
  bytesSlack: number;
  /** Bytes of blocks one import may fetch, whatever the root declares. */
  maxBytes: number;
  /**
   * File bytes per block read (fetched or from the cache): one block read per this many bytes of the declared
   * size is allowed. Honest importers cut 256 KiB or 1 MiB chunks; even 1 KiB chunks under 3 links a node
   * read one block per about 700 bytes.
   */
  fileBytesPerBlock: number;
  /** Blocks read beyond that, for the root and the interior nodes of small files. */
  blocksSlack: number;
  /** Blocks one import may read, whatever the root declares. */
  maxBlocks: number;
  /** Bytes of interior nodes (blocks with links) kept for the import's duration: each is fetched once. */
  interiorCacheBytes: number;
  /** Bytes of leaves kept likewise; a leaf read again after this is full is fetched again (and counted). */
  leafCacheBytes: number;
  /** Blocks served from the cache in a row before the reader lets the event loop run other work. */
  cacheHitsPerTurn: number;
}

/**
 * The limits every import runs under: blocks fetched at most twice the declared size plus 4 MiB (512 MiB at
 * most); one block read per 256 bytes declared plus 64 (1 Mi blocks at most); 8 MiB of interior nodes and
 * 4 MiB of leaves cached, so a block linked over and over is fetched once.
 */
export const DAG_LIMITS: DagLimits = {
  bytesPerFileByte: 2,
  bytesSlack: 2 * MAX_BLOCK_BYTES,
  maxBytes: 512 * MiB,
  fileBytesPerBlock: 256,
  blocksSlack: 64,
  maxBlocks: 1024 * 1024,
  interiorCacheBytes: 8 * MiB,
  leafCacheBytes: 4 * MiB,
  cacheHitsPerTurn: 256,
};

/** Blocks are found by multihash: a CIDv0 and the CIDv1 of the same bytes name one block. */
const keyOf = (cid: CID) => Buffer.from(cid.multihash.bytes).toString('hex');

/**
 * The blocks of one import's UnixFS DAG, decoded (`decodeFileNode`), each fetched and verified by `blocks` at
 * most once while the cache holds it (interior nodes first: `DagLimits`), a block asked for again while its
 * request is under way sharing that request. Every block read, fetched or cached, counts against the import's
 * block budget and every fetched byte against its byte budget (both from the root's declared size).
 */
export class DagReader {
  private blocksRead = 0;
  private bytesFetched = 0;
  /** Until the root is decoded: the root block alone (itself at most `MAX_BLOCK_BYTES`). */
  private blocksBudget = 1;
  private bytesBudget = Number.POSITIVE_INFINITY;
  private fileSize = 0;
  private readonly cache = new Map<string, Promise<FileNode>>();
  private interiorCached = 0;
  private leafCached = 0;
  private hitsInTurn = 0;

  /**
   * @param root the CID being imported (named in messages); `signal` aborts every request (see `BlockSource`).
   */
  constructor(
    private readonly blocks: BlockSource,
    readonly root: CID,
    private readonly signal: AbortSignal,
    private readonly limits: DagLimits = DAG_LIMITS,
  ) {}

  /**
   * Fetches and decodes the root, then sets the budgets from the file size it declares.
   * @throws as `node`.
   */
  async readRoot(): Promise<FileNode> {
    const node = await this.node(this.root);
    const { limits } = this;
    this.fileSize = node.size;
    this.bytesBudget = Math.min(limits.maxBytes, limits.bytesPerFileByte * node.size + limits.bytesSlack);
    this.blocksBudget = Math.min(
      limits.maxBlocks,
      Math.ceil(node.size / limits.fileBytesPerBlock) + limits.blocksSlack,
    );
    return node;
  }

  /**
   * The block `cid` names, verified and decoded as part of the file. Counted when called (so a prefetch
   * counts too).
   * @throws AppError BAD_REQUEST past a budget (the message names it and the declared size) or for a block
   *   that is not part of a UnixFS file; BAD_GATEWAY from `blocks`; the signal's reason once it aborts.
   */
  async node(cid: CID): Promise<FileNode> {
    this.blocksRead++;
    if (this.blocksRead > this.blocksBudget) {
      throw this.overBudget(`more than ${this.blocksBudget} blocks`);
    }
    const key = keyOf(cid);
    const cached = this.cache.get(key);
    if (cached) {
      // Blocks served from memory only could hold the event loop for as long as the budget allows.
      if (++this.hitsInTurn >= this.limits.cacheHitsPerTurn) {
        this.hitsInTurn = 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
        this.signal.throwIfAborted();
      }
      return cached;
    }
    const fetching = this.fetch(cid, key);
    this.cache.set(key, fetching);
    return fetching;
  }

  /** Blocks read and bytes fetched so far (for messages and tests). */
  get usage(): { blocks: number; bytes: number } {
    return { blocks: this.blocksRead, bytes: this.bytesFetched };
  }

  private async fetch(cid: CID, key: string): Promise<FileNode> {
    try {
      const bytes = await this.blocks.get(cid, this.signal);
      this.bytesFetched += bytes.length;
      if (this.bytesFetched > this.bytesBudget) {
        throw this.overBudget(`more than ${this.bytesBudget} bytes of blocks`);
      }
      const node = decodeFileNode(cid, bytes, this.root);
      if (!this.keep(node, bytes.length)) this.cache.delete(key);
      return node;
    } catch (e) {
      this.cache.delete(key);
      throw e;
    }
  }

  /** Whether the cache has room for a block of `size` bytes of its kind; if so it is counted as kept. */
  private keep(node: FileNode, size: number): boolean {
    if (node.children.length > 0) {
      if (this.interiorCached + size > this.limits.interiorCacheBytes) return false;
      this.interiorCached += size;
      return true;
    }
    if (this.leafCached + size > this.limits.leafCacheBytes) return false;
    this.leafCached += size;
    return true;
  }

  private overBudget(what: string): AppError {
    return new AppError(
      'BAD_REQUEST',
      `cid: ${this.root} names a DAG this service does not read: it takes ${what} for a file of ${this.fileSize} bytes (blocks linked over and over, or far larger than the file they make)`,
      { fields: ['cid'] },
    );
  }
}
