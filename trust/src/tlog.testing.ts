import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import {
  ed25519KeyId,
  ed25519VerifierKey,
  formatCheckpoint,
  formatSignedNote,
  parseVerifierKey,
  type VerifierKey,
} from './signed-note';
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

/** A throwaway Ed25519 log key for tests: its verifier key, and checkpoints signed by it (or by `signer`). */
export interface TestLogSigner {
  /** The verifier key (`<origin>+<hex id>+<base64 key>`, C2SP signed-note). */
  vkey: string;
  key: VerifierKey;
  privateKey: KeyObject;
  /** The signed note of the checkpoint `origin`/`size`/`root`, signed by `signer` (default: this key) under its name. */
  signCheckpoint(size: number, root: Uint8Array, signer?: KeyObject): string;
}

/** A fresh `TestLogSigner` for the log named `origin`. */
export function testLogSigner(origin: string): TestLogSigner {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const raw = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }).subarray(-32));
  const vkey = ed25519VerifierKey(origin, raw);
  return {
    vkey,
    key: parseVerifierKey(vkey),
    privateKey,
    signCheckpoint: (size, root, signer = privateKey) => {
      const text = formatCheckpoint({ origin, size, root, extensions: [] });
      const signature = new Uint8Array(sign(null, Buffer.from(text), signer));
      return formatSignedNote({
        text,
        signatures: [{ name: origin, id: ed25519KeyId(origin, raw), signature }],
      });
    },
  };
}
