import { digest, equalBytes, fromHex, toHex } from '@notary/trust/bytes';
import type { ReceiptMerkleProof } from './receipt.ts';

/**
 * Recomputes a Merkle root from a document hash and its proof under the receipt's hashing rule
 * (`sha256-rfc6962`, RFC 6962 section 2.1): leaf `SHA-256(0x00 || h)`, node `SHA-256(0x01 || left || right)`,
 * each sibling concatenated on the side it names; a proof without siblings (a batch of one) has root `h`.
 * Returns the root, lower-case hex. @throws TypeError when `leafHex` or a sibling is not 32 bytes of hex.
 */
export async function recomputeMerkleRoot(leafHex: string, proof: Pick<ReceiptMerkleProof, 'siblings'>) {
  const leaf = fromHex(leafHex);
  if (leaf.length !== 32) throw new TypeError('the document hash is not 32 bytes');
  if (proof.siblings.length === 0) return toHex(leaf);
  let acc = await digest(concat(Uint8Array.of(0x00), leaf));
  for (const sibling of proof.siblings) {
    const s = fromHex(sibling.hash);
    if (s.length !== 32) throw new TypeError('a sibling is not 32 bytes');
    acc = await digest(
      sibling.position === 'left' ? concat(Uint8Array.of(0x01), s, acc) : concat(Uint8Array.of(0x01), acc, s),
    );
  }
  return toHex(acc);
}

/** Whether `proof` leads from `leafHex` to `rootHex` (never throws). */
export async function merkleProofHolds(
  leafHex: string,
  proof: Pick<ReceiptMerkleProof, 'siblings'>,
  rootHex: string,
): Promise<boolean> {
  try {
    return equalBytes(fromHex(await recomputeMerkleRoot(leafHex, proof)), fromHex(rootHex));
  } catch {
    return false;
  }
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
