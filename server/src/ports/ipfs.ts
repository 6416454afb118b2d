import type { Readable } from 'node:stream';

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
   * slots from the call until then.
   * @throws AppError BAD_REQUEST for a CID that is not accepted or names no file (a directory); RATE_LIMITED
   *   (with `retryAfterSeconds`) when as many reads are running as the service allows, before any request;
   *   BAD_GATEWAY when the root block cannot be had from any gateway; GATEWAY_TIMEOUT past the deadline;
   *   `signal`'s reason once it aborts.
   */
  fetchFile(cid: string, options: { signal: AbortSignal }): Promise<IpfsFile>;
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
