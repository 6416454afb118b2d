import type { Readable } from 'node:stream';
import type { FairQueue } from '@notary/platform/fair-queue';

/**
 * IPFS port: files named by a CID, fetched from trustless gateways (IPFS Trustless Gateway spec) and verified block by
 * block against the CID, so that no gateway can make the service read bytes that are not the CID's; and the public
 * gateway links of download and view (spec, Documents: rule 3). Implemented by `adapters/ipfs` (HTTP only: no libp2p,
 * DHT, bootstrap peers or routing). Errors are `AppError`s: BAD_REQUEST for what the CID names (not accepted, a
 * directory, not a UnixFS file, a DAG past the read's budgets), BAD_GATEWAY for every gateway failure (unreachable,
 * timed out, 5xx, a block that does not hash to its CID), RATE_LIMITED when as many reads run as the service allows,
 * GATEWAY_TIMEOUT past the whole read's deadline, with a message naming it (and the setting, for the last two).
 */
export interface IpfsGateways {
  /**
   * The CID as the service records it (`ipfs://<cid>`): a bare CIDv0 (`Qm…`, base58btc) or CIDv1 in base32
   * (`b…`), sha2-256, dag-pb or raw codec, exactly as given (no path, no `ipfs://`, no other base).
   * @throws AppError BAD_REQUEST saying what is accepted.
   */
  parseCid(text: string): string;
  /**
   * Starts reading the file `cid` names: resolves once its root block is fetched and verified, with the
   * file's size as the UnixFS root declares it, and a stream of the file's bytes in order, each block
   * verified against its CID before any of its bytes are pushed. The stream errors with an AppError
   * (BAD_GATEWAY; BAD_REQUEST when a block is not part of a UnixFS file or the DAG passes the read's budgets of
   * blocks and bytes, set from the declared size; GATEWAY_TIMEOUT past the read's deadline), or with `signal`'s
   * reason once it aborts, and never ends early: a complete stream is the CID's whole content. Destroying it
   * (or aborting `signal`) stops every request at once; the read holds one of the service's concurrent read
   * slots (of the queue of `options.use`, `queues`) from its start until then, waiting for its turn first when
   * all are taken (served in turn across `options.key`s, each key within its share; the deadline counts from
   * the start).
   * @param options.key whose share the read counts against: the tenant id (default one key for all).
   * @param options.use `import` (default) or `certificate` (a certificate re-reading an imported PDF): each has
   *   its own slots, so that neither can keep the other waiting.
   * @throws AppError BAD_REQUEST for a CID that is not accepted or names no file (a directory); RATE_LIMITED
   *   (with `retryAfterSeconds`) before any request, when every running and waiting place is taken or the key
   *   holds its share (also later, for a waiting read whose place went to a key that held none);
   *   BAD_GATEWAY when the root block cannot be had from any gateway; GATEWAY_TIMEOUT past the deadline;
   *   `signal`'s reason once it aborts.
   */
  fetchFile(cid: string, options: IpfsReadOptions): Promise<IpfsFile>;
  /** The read queues, by use: each key's share of the read slots (`snapshot()`), for the operator. */
  readonly queues: Readonly<Record<IpfsReadUse, FairQueue>>;
  /**
   * The public gateway URL of `cid` (`IPFS_PUBLIC_GATEWAY`): `<gateway>/ipfs/<cid>?filename=<name>`, plus
   * `&download=true` (the gateway answers as an attachment) when `download`.
   */
  publicUrl(cid: string, options: { fileName: string; download: boolean }): string;
}

/** A file being read from IPFS. */
export interface IpfsFile {
  /** Bytes, as the UnixFS root declares them (a raw block: its length). */
  size: number;
  /** The file's bytes, verified; see `IpfsGateways.fetchFile`. */
  stream: Readable;
}

/** What a read of IPFS is for: each use has its own read slots. */
export type IpfsReadUse = 'import' | 'certificate';

/** How a read of IPFS is made (see `IpfsGateways.fetchFile`). */
export interface IpfsReadOptions {
  signal: AbortSignal;
  /** Whose share of the read slots it takes: the tenant id; undefined: one key shared by all such reads. */
  key?: string | undefined;
  /** Default `import`. */
  use?: IpfsReadUse | undefined;
}
