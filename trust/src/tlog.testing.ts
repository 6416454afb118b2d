import { EMPTY_ROOT, nodeHash } from './tlog';

/**
 * RFC 9162's MTH (2.1.1) written out recursively over the leaf hashes: the reference the tiled and proof code is
 * checked against in tests.
 */
export function naiveRoot(leaves: readonly Uint8Array[]): Uint8Array {
  if (leaves.length === 0) return EMPTY_ROOT;
  if (leaves.length === 1) return leaves[0] as Uint8Array;
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return nodeHash(naiveRoot(leaves.slice(0, k)), naiveRoot(leaves.slice(k)));
}
