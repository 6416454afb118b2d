import { AppError } from '@notary/shared';
import { CID } from 'multiformats/cid';

/** Multicodec codes of the blocks a UnixFS file is made of (multicodec table). */
export const DAG_PB = 0x70;
export const RAW = 0x55;
/** Multihash function codes the client verifies (multihash table): sha2-256, and identity (inline data). */
export const SHA2_256 = 0x12;
export const IDENTITY = 0x00;

/** What a client may send, for messages. */
export const ACCEPTED_CID =
  'a bare CID: CIDv0 (Qm…, base58btc) or CIDv1 in base32 (b…), of a file (dag-pb or raw, sha2-256)';

/** Longest CID text considered: a CIDv1 base32 of a sha2-256 multihash is 59 characters. */
const MAX_CID_CHARS = 100;

/**
 * Parses the CID of an import (spec, Documents: "bare CID v0 or v1 base32"): accepted only in its canonical
 * text, a CIDv0 (base58btc `Qm…`) or a CIDv1 in lower-case base32 (multibase prefix `b`), with a sha2-256
 * multihash and the dag-pb or raw codec (UnixFS, IPFS specs). A path, `ipfs://…`, another base (base36
 * `k…`, base58btc `z…`, upper-case `B…`) or another codec or hash function is refused.
 * @throws AppError BAD_REQUEST naming what is accepted.
 */
export function parseBareCid(text: string): CID {
  const refuse = (why: string): never => {
    throw new AppError('BAD_REQUEST', `cid: ${why}; expected ${ACCEPTED_CID}`, { fields: ['cid'] });
  };
  if (text.length === 0 || text.length > MAX_CID_CHARS) refuse('not a CID');
  if (!text.startsWith('Qm') && !text.startsWith('b')) refuse('not a bare CIDv0 or base32 CIDv1');
  let cid: CID;
  try {
    cid = CID.parse(text);
  } catch {
    return refuse('not a CID');
  }
  // The canonical text of a v0 is base58btc, of a v1 lower-case base32: anything else was another spelling.
  if (cid.toString() !== text) refuse('not in canonical form');
  if (cid.code !== DAG_PB && cid.code !== RAW) refuse('not the CID of a file (codec neither dag-pb nor raw)');
  if (cid.multihash.code !== SHA2_256) refuse('hash function not supported');
  return cid;
}
