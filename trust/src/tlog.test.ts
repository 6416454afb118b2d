import { generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { fromHex, toHex } from './bytes';
import {
  ed25519KeyId,
  ed25519VerifierKey,
  formatCheckpoint,
  formatSignedNote,
  parseCheckpoint,
  parseVerifierKey,
  verifyCheckpoint,
  verifySignedNote,
} from './signed-note';
import {
  consistencyProof,
  EMPTY_ROOT,
  entryBundle,
  inclusionProof,
  leafHash,
  nodeHash,
  parseEntryBundle,
  parseTilePath,
  type SubtreeReader,
  tilePath,
  tileWidth,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
} from './tlog';
import { naiveRoot } from './tlog.testing';

/** Every complete subtree hash, level by level, over `leaves`. */
function levelsReader(leaves: Uint8Array[]): SubtreeReader {
  const levels: Uint8Array[][] = [leaves];
  for (let h = 0; (levels[h] as Uint8Array[]).length > 1; h++) {
    const below = levels[h] as Uint8Array[];
    const next: Uint8Array[] = [];
    for (let i = 0; i + 1 < below.length; i += 2)
      next.push(nodeHash(below[i] as Uint8Array, below[i + 1] as Uint8Array));
    levels.push(next);
  }
  return (height, index) => {
    const hash = levels[height]?.[index];
    if (!hash) throw new RangeError(`no hash ${height}/${index}`);
    return hash;
  };
}

const entries = (n: number, tag = 'e') =>
  Array.from({ length: n }, (_, i) => new TextEncoder().encode(`${tag}${i}`));

describe('RFC 9162 tree', () => {
  it('hashes leaves and nodes with the 0x00 and 0x01 prefixes (the RFC 6962 empty and one-leaf roots)', () => {
    expect(toHex(EMPTY_ROOT)).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    // SHA-256 of the single byte 0x00: the leaf hash of the empty entry.
    expect(toHex(leafHash(new Uint8Array(0)))).toBe(
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
    );
  });

  it('roots, inclusion and consistency proofs agree with the recursive definition for every size up to 70', () => {
    const leaves = entries(70).map(leafHash);
    const read = levelsReader(leaves);
    for (let n = 1; n <= 70; n++) {
      const root = treeRoot(n, read);
      expect(toHex(root)).toBe(toHex(naiveRoot(leaves.slice(0, n))));
      for (let i = 0; i < n; i++) {
        expect(verifyInclusion(leaves[i] as Uint8Array, i, n, inclusionProof(i, n, read), root)).toBe(true);
      }
      for (let m = 0; m <= n; m++) {
        const old = treeRoot(m, read);
        expect(verifyConsistency(m, n, consistencyProof(m, n, read), old, root)).toBe(true);
      }
    }
  });

  it('refuses proofs against a changed, removed or inserted leaf and a rollback', () => {
    const leaves = entries(3000).map(leafHash);
    const read = levelsReader(leaves);
    const root1000 = treeRoot(1000, read);
    // The history rewritten: leaf 500 changed, leaf 600 removed, one inserted at 700, then grown to 3000.
    const rewrites = [
      leaves.map((l, i) => (i === 500 ? leafHash(new TextEncoder().encode('forged')) : l)),
      leaves.filter((_, i) => i !== 600),
      [...leaves.slice(0, 700), leafHash(new TextEncoder().encode('inserted')), ...leaves.slice(700)],
    ];
    for (const forged of rewrites) {
      const forgedRead = levelsReader(forged);
      const forgedRoot = treeRoot(2999, forgedRead);
      expect(
        verifyConsistency(1000, 2999, consistencyProof(1000, 2999, forgedRead), root1000, forgedRoot),
      ).toBe(false);
    }
    // A rollback: an older size after a newer one has no proof at all.
    expect(() => consistencyProof(2000, 1000, read)).toThrow(RangeError);
    expect(verifyConsistency(2000, 1000, [], treeRoot(2000, read), root1000)).toBe(false);
    // A proof for one leaf does not pass for its neighbour, nor against another size.
    const proof = inclusionProof(10, 1000, read);
    expect(verifyInclusion(leaves[11] as Uint8Array, 10, 1000, proof, root1000)).toBe(false);
    expect(verifyInclusion(leaves[10] as Uint8Array, 10, 2000, proof, root1000)).toBe(false);
  });

  it('writes and parses tile paths and entry bundles (C2SP tlog-tiles)', () => {
    expect(tilePath({ level: 0, index: 1234067 })).toBe('tile/0/x001/x234/067');
    expect(tilePath({ level: 'entries', index: 5, width: 17 })).toBe('tile/entries/005.p/17');
    expect(parseTilePath('tile/1/x001/x234/067.p/255')).toEqual({ level: 1, index: 1234067, width: 255 });
    for (const bad of [
      'tile/0/1',
      'tile/01/000',
      'tile/0/000.p/0',
      'tile/0/000.p/256',
      'tile/64/000',
      'tile/0/x000/001',
    ])
      expect(parseTilePath(bad)).toBeUndefined();
    // A tree of 70,000 leaves: 273 full level-0 tiles and one of 112, one full level-1 tile and one of 17, level 2: 1.
    expect([tileWidth(0, 272, 70000), tileWidth(0, 273, 70000), tileWidth(0, 274, 70000)]).toEqual([
      256, 112, 0,
    ]);
    expect([tileWidth(1, 0, 70000), tileWidth(1, 1, 70000), tileWidth(2, 0, 70000)]).toEqual([256, 17, 1]);
    const bundle = entryBundle(entries(3));
    expect(parseEntryBundle(bundle).map((e) => new TextDecoder().decode(e))).toEqual(['e0', 'e1', 'e2']);
    expect(() => parseEntryBundle(bundle.subarray(0, bundle.length - 1))).toThrow(RangeError);
  });
});

describe('C2SP signed-note and tlog-checkpoint', () => {
  it('verifies the signed-note example of the specification', async () => {
    const key = parseVerifierKey('example.com/foo+530d903a+AekyeRrm56hApGFkyQR4ZCbV54Id2LKaANYcrnKv3U2k');
    const note =
      'This is an example message.\n\n\u2014 example.com/foo Uw2QOkn8srV1yJGh2VYRlL1Tnagv1YEq6TfXppzi2ONncAlTgK7Ztg1ERYNZXsYjOBH3mFXmRKuwHjG1Yu72IneyaQM=\n';
    await expect(verifySignedNote(note, [key])).resolves.toEqual({
      text: 'This is an example message.\n',
      verifiedBy: ['example.com/foo'],
    });
    await expect(
      verifySignedNote(note.replace('example message', 'exemplary message'), [key]),
    ).rejects.toThrow(/does not verify/);
  });

  it('signs a checkpoint with a node:crypto Ed25519 key and checks it against the verifier key only', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const raw = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }).subarray(-32));
    const name = 'notary.example/log';
    const text = formatCheckpoint({ origin: name, size: 42, root: fromHex('11'.repeat(32)), extensions: [] });
    const signature = new Uint8Array(sign(null, Buffer.from(text), privateKey));
    const note = formatSignedNote({ text, signatures: [{ name, id: ed25519KeyId(name, raw), signature }] });
    const vkey = parseVerifierKey(ed25519VerifierKey(name, raw));
    const cp = await verifyCheckpoint(note, vkey);
    expect([cp.size, toHex(cp.root)]).toEqual([42, '11'.repeat(32)]);
    const other = generateKeyPairSync('ed25519')
      .publicKey.export({ format: 'der', type: 'spki' })
      .subarray(-32);
    await expect(
      verifyCheckpoint(note, parseVerifierKey(ed25519VerifierKey(name, new Uint8Array(other)))),
    ).rejects.toThrow(/no known key/);
    expect(() => parseCheckpoint('o\n01\nAAAA\n')).toThrow(TypeError);
  });
});
