import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  buildMerkleTree,
  hashFromHex,
  hashLeaf,
  hashNode,
  type MerkleProof,
  toHex,
  verifyMerkleProof,
} from './merkle';

const sha = (s: string): Uint8Array => new Uint8Array(createHash('sha256').update(s).digest());
const docs = (n: number): Uint8Array[] => Array.from({ length: n }, (_, i) => sha(`document ${i}`));

/** RFC 6962 section 2.1 Merkle Tree Hash, written recursively as the RFC states it (independent oracle). */
function mth(leaves: Uint8Array[]): Uint8Array {
  if (leaves.length === 1) return hashLeaf(leaves[0] as Uint8Array);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return hashNode(mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

describe('buildMerkleTree / verifyMerkleProof', () => {
  it.each([1, 2, 3, 7, 1000])('every proof of a %i-leaf tree verifies', (n) => {
    const leaves = docs(n);
    const { root, proofs } = buildMerkleTree(leaves);
    expect(root).toHaveLength(32);
    expect(proofs).toHaveLength(n);
    proofs.forEach((proof, i) => {
      expect(proof.index).toBe(i);
      // Round-trip through JSON: proofs are stored and served as JSON.
      const parsed = JSON.parse(JSON.stringify(proof)) as MerkleProof;
      expect(verifyMerkleProof(leaves[i] as Uint8Array, parsed, root)).toBe(true);
    });
    if (n > 1) expect(Math.max(...proofs.map((p) => p.siblings.length))).toBe(Math.ceil(Math.log2(n)));
  });

  it('a batch of one anchors the document hash itself (no prefix, no siblings)', () => {
    const [leaf] = docs(1) as [Uint8Array];
    const { root, proofs } = buildMerkleTree([leaf]);
    expect(toHex(root)).toBe(toHex(leaf));
    expect(proofs).toEqual([{ index: 0, siblings: [] }]);
    expect(verifyMerkleProof(sha('other'), { index: 0, siblings: [] }, root)).toBe(false);
  });

  it('matches a known vector (SHA-256 of "a", "b", "c"; computed independently with Python hashlib)', () => {
    const leaves = ['a', 'b', 'c'].map(sha);
    expect(toHex(buildMerkleTree(leaves.slice(0, 2)).root)).toBe(
      'ad5ca6cddc0b27c6a83e332bf28011769236e6c6a1f786ebf7b5267b37a5bd22',
    );
    const { root, proofs } = buildMerkleTree(leaves);
    expect(toHex(root)).toBe('cac3d448d4e20a2ad5eae1f500e63c2a7f9217cd14572ba7fd22e26dc1ec2648');
    // "c" is the promoted odd node: its only sibling is the (a,b) node, on the left.
    expect(proofs[2]).toEqual({
      index: 2,
      siblings: [
        { position: 'left', hash: 'ad5ca6cddc0b27c6a83e332bf28011769236e6c6a1f786ebf7b5267b37a5bd22' },
      ],
    });
  });

  it('equals the recursive RFC 6962 Merkle Tree Hash for every size from 2 to 70', () => {
    for (let n = 2; n <= 70; n++) {
      const leaves = docs(n);
      expect(toHex(buildMerkleTree(leaves).root), `n=${n}`).toBe(toHex(mth(leaves)));
    }
  });

  it('keeps insertion order: the same leaves in another order give another root', () => {
    const leaves = docs(4);
    expect(toHex(buildMerkleTree(leaves).root)).not.toBe(toHex(buildMerkleTree([...leaves].reverse()).root));
  });

  it('rejects tampering', () => {
    const leaves = docs(7);
    const { root, proofs } = buildMerkleTree(leaves);
    const leaf = leaves[3] as Uint8Array;
    const proof = proofs[3] as MerkleProof;
    expect(verifyMerkleProof(leaf, proof, root)).toBe(true);
    // Wrong leaf, wrong root.
    expect(verifyMerkleProof(leaves[4] as Uint8Array, proof, root)).toBe(false);
    const badRoot = new Uint8Array(root);
    badRoot[0] = (badRoot[0] as number) ^ 1;
    expect(verifyMerkleProof(leaf, proof, badRoot)).toBe(false);
    // A flipped bit in a sibling, a swapped side, a dropped or extra step, malformed hex.
    const first = proof.siblings[0] as MerkleProof['siblings'][number];
    const flipped = `${first.hash.slice(0, 63)}${first.hash[63] === '0' ? '1' : '0'}`;
    const variants: MerkleProof[] = [
      { ...proof, siblings: [{ ...first, hash: flipped }, ...proof.siblings.slice(1)] },
      {
        ...proof,
        siblings: [
          { ...first, position: first.position === 'left' ? 'right' : 'left' },
          ...proof.siblings.slice(1),
        ],
      },
      { ...proof, siblings: proof.siblings.slice(1) },
      { ...proof, siblings: [...proof.siblings, first] },
      { ...proof, siblings: [{ ...first, hash: 'zz' }, ...proof.siblings.slice(1)] },
      { ...proof, siblings: [] },
    ];
    for (const v of variants) expect(verifyMerkleProof(leaf, v, root)).toBe(false);
    // An inner node presented as a leaf (second-preimage attempt) does not verify: leaves are prefixed 0x00.
    const inner = hashNode(hashLeaf(leaves[0] as Uint8Array), hashLeaf(leaves[1] as Uint8Array));
    const upper = proofs[0]?.siblings.slice(1) ?? [];
    expect(verifyMerkleProof(inner, { index: 0, siblings: upper }, root)).toBe(false);
  });

  it('refuses empty batches and leaves that are not 32 bytes', () => {
    expect(() => buildMerkleTree([])).toThrow(TypeError);
    expect(() => buildMerkleTree([new Uint8Array(31)])).toThrow(TypeError);
    expect(verifyMerkleProof(new Uint8Array(31), { index: 0, siblings: [] }, new Uint8Array(32))).toBe(false);
    expect(() => hashFromHex('12')).toThrow(TypeError);
    expect(toHex(hashFromHex(`0x${'AB'.repeat(32)}`))).toBe('ab'.repeat(32));
  });
});
