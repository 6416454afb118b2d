import { createHash } from 'node:crypto';

/**
 * SHA-256 Merkle tree of a batch of document hashes: one transaction per chain anchors the root of a whole batch, and
 * each document keeps its proof.
 *
 * Hashing, with RFC 6962 (Certificate Transparency, section 2.1) domain separation so that a leaf can never be
 * passed off as an inner node (the second-preimage attack on plain Merkle trees):
 *
 * - leaf hash `L(d) = SHA-256(0x00 || d)` where `d` is the document's 32-byte SHA-256;
 * - node hash `N(l, r) = SHA-256(0x01 || l || r)`.
 *
 * Shape decisions (all fixed: changing any of them changes every root already anchored):
 *
 * - **Order**: leaves keep their insertion order (no sorting); each proof carries its leaf's `index`. Sorting
 *   would only matter for proofs without positions; ours say on which side each sibling sits.
 * - **Odd node**: at a level with an odd count, the last node is promoted unchanged to the next level (not
 *   duplicated, as Bitcoin does: duplication lets two different leaf lists share a root, CVE-2012-2459). This
 *   bottom-up pairing gives exactly RFC 6962's Merkle Tree Hash (split at the largest power of two below n) for
 *   every n >= 2 (checked by the tests against a recursive MTH), so any RFC 6962 implementation can recompute
 *   our roots.
 * - **Batch of one**: the root of a one-leaf tree is the document hash itself, with no prefix, and its proof
 *   has no siblings: a batch of one anchors exactly the document's SHA-256, which anyone can recognize on the
 *   chain without this service. This is the only exception to the leaf prefix. It cannot be abused: a proof
 *   with no siblings only accepts `leaf == root`, and making a multi-leaf root pass for a document would need a
 *   file whose SHA-256 is that root (a SHA-256 preimage). A batch that anchors the transparency log's checkpoint
 *   (`batch-cut.ts`) has it as its last leaf, so a batch of one document is a tree of two leaves.
 *
 * Proofs are plain JSON: sibling hashes are lower-case hex, 64 characters, no `0x` (the same form as a
 * Document's `sha256Hash`).
 */

/** One step of a proof: the sibling hash and on which side of the running hash it is concatenated. */
export interface MerkleSibling {
  position: 'left' | 'right';
  /** 32 bytes, lower-case hex without `0x`. */
  hash: string;
}

/** Inclusion proof of one leaf; JSON-serializable as is. */
export interface MerkleProof {
  /** Position of the leaf in the batch (insertion order), 0-based. Informational: verification uses `siblings`. */
  index: number;
  /** From the leaf level up to the root's children. Empty only for a one-leaf tree. */
  siblings: MerkleSibling[];
}

export interface MerkleTree {
  /** 32 bytes: the value anchored on chain. */
  root: Uint8Array;
  /** One proof per leaf, in the leaves' order (`proofs[i].index === i`). */
  proofs: MerkleProof[];
}

const LEAF_PREFIX = Uint8Array.of(0x00);
const NODE_PREFIX = Uint8Array.of(0x01);
const HASH_BYTES = 32;

function sha256(...parts: Uint8Array[]): Uint8Array {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

/** `SHA-256(0x00 || leaf)`. */
export function hashLeaf(leaf: Uint8Array): Uint8Array {
  return sha256(LEAF_PREFIX, leaf);
}

/** `SHA-256(0x01 || left || right)`. */
export function hashNode(left: Uint8Array, right: Uint8Array): Uint8Array {
  return sha256(NODE_PREFIX, left, right);
}

/** Lower-case hex without `0x`. */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** Parses 32-byte hex (with or without `0x`, any case). Throws `TypeError` on anything else. */
export function hashFromHex(hex: string): Uint8Array {
  const clean = hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex;
  if (!/^[0-9a-fA-F]{64}$/.test(clean)) throw new TypeError(`expected 32 bytes of hex, got "${hex}"`);
  return new Uint8Array(Buffer.from(clean, 'hex'));
}

function assertHash(value: Uint8Array, what: string): void {
  if (value.length !== HASH_BYTES) throw new TypeError(`${what} must be 32 bytes, got ${value.length}`);
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/**
 * Builds the tree of `leaves` (each a document's 32-byte SHA-256, in batch order) and every leaf's proof.
 * O(n log n) for the proofs. Throws `TypeError` on an empty list or a leaf that is not 32 bytes.
 */
export function buildMerkleTree(leaves: Uint8Array[]): MerkleTree {
  if (leaves.length === 0) throw new TypeError('a Merkle tree needs at least one leaf');
  leaves.forEach((leaf, i) => {
    assertHash(leaf, `leaf ${i}`);
  });
  if (leaves.length === 1) {
    return { root: new Uint8Array(leaves[0] as Uint8Array), proofs: [{ index: 0, siblings: [] }] };
  }
  const proofs: MerkleProof[] = leaves.map((_, index) => ({ index, siblings: [] }));
  // members[j]: the leaf indexes under node j of the current level.
  let level = leaves.map(hashLeaf);
  let members: number[][] = leaves.map((_, i) => [i]);
  while (level.length > 1) {
    const nextLevel: Uint8Array[] = [];
    const nextMembers: number[][] = [];
    for (let j = 0; j < level.length; j += 2) {
      const left = level[j] as Uint8Array;
      const right = level[j + 1];
      const leftMembers = members[j] as number[];
      if (right === undefined) {
        // Odd node: promoted unchanged, its leaves gain no sibling at this level.
        nextLevel.push(left);
        nextMembers.push(leftMembers);
        continue;
      }
      const rightMembers = members[j + 1] as number[];
      for (const i of leftMembers) proofs[i]?.siblings.push({ position: 'right', hash: toHex(right) });
      for (const i of rightMembers) proofs[i]?.siblings.push({ position: 'left', hash: toHex(left) });
      nextLevel.push(hashNode(left, right));
      nextMembers.push(leftMembers.concat(rightMembers));
    }
    level = nextLevel;
    members = nextMembers;
  }
  return { root: level[0] as Uint8Array, proofs };
}

/**
 * Recomputes the root from `leaf` (a document's 32-byte SHA-256) and `proof`, and compares it with `root`.
 * Returns false (never throws) for a wrong leaf, a tampered or malformed proof, or a wrong root.
 */
export function verifyMerkleProof(leaf: Uint8Array, proof: MerkleProof, root: Uint8Array): boolean {
  if (leaf.length !== HASH_BYTES || root.length !== HASH_BYTES) return false;
  if (proof.siblings.length === 0) return equalBytes(leaf, root);
  let acc = hashLeaf(leaf);
  for (const s of proof.siblings) {
    let sibling: Uint8Array;
    try {
      sibling = hashFromHex(s.hash);
    } catch {
      return false;
    }
    if (s.position === 'left') acc = hashNode(sibling, acc);
    else if (s.position === 'right') acc = hashNode(acc, sibling);
    else return false;
  }
  return equalBytes(acc, root);
}
